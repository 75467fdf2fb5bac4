// The HTML report of `gangway simulate --report FILE.html`: the policies compared side by side
// (a summary table, goodput and attainment bars), then, per policy, TTFT and TPOT CDFs per class
// and tier, GPU-time by activity over time with a strip of gang phases, and queue depth and KV
// use per model over time.
#pragma once

#include <string>
#include <vector>

#include "cli/html_report.h"
#include "cli/simulation_run.h"
#include "config/scenario.h"

namespace gangway {

// A table to show above the plots (the seed summary of --seeds).
struct ReportTable {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// `runs` need their time series (run with a series bin) for the plots over time.
HtmlReport simulation_report_html(const Scenario& scenario, const std::vector<PolicyRun>& runs,
                                  const std::vector<ReportTable>& tables = {});

// The bin width the report's time series use for a run of this length: about 200 bins.
Duration report_series_bin(const Scenario& scenario);

// The label of a run in tables and plots: its policy, and its routing rule when runs differ in it.
std::string run_label(const PolicyRun& run, const std::vector<PolicyRun>& runs);

}  // namespace gangway
