// `gangway simulate --seeds`: the same policies run on several seeds (each its own arrivals), and
// each figure summarised over the seeds (mean, spread, 95 % confidence interval), so that a
// difference between policies can be told from seed-to-seed noise.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli/seed_statistics.h"
#include "cli/simulation_html.h"
#include "cli/simulation_run.h"
#include "config/scenario.h"

namespace gangway {

// One policy (and routing rule) over every seed.
struct RunGroupSummary {
  std::string label;  // as run_label
  std::string policy;
  std::string mode;
  std::string routing;
  std::vector<uint64_t> seeds;
  // Figure name ("total.goodput_rps", "classes.interactive.slo_attainment", ...) and its spread
  // over the seeds that had data for it; in a fixed order.
  std::vector<std::pair<std::string, SeedSpread>> figures;

  const SeedSpread* figure(const std::string& name) const;
};

// Groups `runs` (each with its seed) by policy, mode and routing, in the order they first
// appear, and summarises each figure of their JSON (`run_documents`, as simulation_report_json's
// runs, in the same order as `runs`).
std::vector<RunGroupSummary> summarize_seeds(const Scenario& scenario,
                                             const std::vector<PolicyRun>& runs,
                                             const nlohmann::json& run_documents);

// The summary as a table for the HTML report: per policy, the main figures' mean ± half-width.
ReportTable seed_report_table(const Scenario& scenario, const std::vector<RunGroupSummary>& groups);

// [{"policy","mode","routing","seeds":[...],"figures":{NAME: {"samples","mean","stdev","min",
//  "max","ci95":[low, high] or null}}}]
nlohmann::json seed_summary_json(const std::vector<RunGroupSummary>& groups);

}  // namespace gangway
