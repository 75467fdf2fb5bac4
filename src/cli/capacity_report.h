// What `gangway capacity` found, and how it is shown: a table on a terminal (100 columns), one
// JSON document (--json), an HTML page with plots (--report).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/capacity_search.h"
#include "cli/html_report.h"
#include "cli/seed_statistics.h"
#include "config/scenario.h"

namespace gangway {

// One policy under one set of --vary settings, searched in one scope over every seed.
struct CapacityResult {
  std::string label;  // policy, and the settings when there are several
  PolicySpec policy;
  std::string mode;
  std::vector<ScenarioSetting> settings;  // this variant's --vary values
  CapacityScope scope = CapacityScope::kMix;
  std::vector<SeedSearch> seeds;

  // Below the range if any seed's answer is, else above it if any seed's is.
  CapacityBound bound() const;
  // Over the seeds with a passing probe: the highest passing load's requests per second (its
  // small- and large-model parts), and the scale of the scenario's rates.
  std::optional<SeedSpread> capacity_rps() const;
  std::optional<SeedSpread> small_rps() const;
  std::optional<SeedSpread> large_rps() const;
  std::optional<SeedSpread> capacity_scale() const;
  // What failed first just above the capacity (the median seed's lowest failing probe).
  std::optional<WorstPair> limited_by() const;
};

struct CapacityReport {
  std::string scenario_name;
  std::string scenario_path;
  struct Model {
    std::string name;
    std::string tier;
    int replicas = 0;  // small: one per listed GPU; large: 1
    int tensor_parallel = 1;
  };
  std::vector<Model> models;
  std::string hardware;
  int gpus = 0;
  std::vector<std::pair<std::string, double>> class_targets;
  CapacityCriterion criterion;
  CapacityRange range;
  std::vector<uint64_t> seeds;
  double measured_s = 0;
  double warmup_s = 0;
  std::vector<CapacityResult> results;
};

void print_capacity_table(std::ostream& out, const CapacityReport& report);
nlohmann::json capacity_report_json(const CapacityReport& report);
HtmlReport capacity_report_html(const CapacityReport& report);
// "lease_max_ms=60": settings by the last part of their key paths, for a row's label.
std::string short_settings_text(const std::vector<ScenarioSetting>& settings);

}  // namespace gangway
