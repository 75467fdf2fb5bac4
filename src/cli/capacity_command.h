// `gangway capacity SCENARIO`: how much load the node takes within the scenario's SLOs. Per model
// tier alone and for the scenario's own mix, over several seeds, under one or more policies and
// a small grid of settings (--vary), it searches the highest load at which every class meets its
// attainment target (capacity_search.h) and reports it with a confidence interval. It writes
// nothing but its output (and --report's file).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/workload_overrides.h"

namespace CLI {
class App;
}  // namespace CLI

namespace gangway {

struct CapacityOptions : WorkloadOverrides {
  std::string scenario_path;
  std::vector<std::string> policies;
  // "KEY.PATH=V1,V2,...": each value is a --set; several --vary make a grid.
  std::vector<std::string> varies;
  // small, large, mix (default: each that has traffic).
  std::vector<std::string> searches;
  std::string seeds = "3";
  std::optional<double> attainment;
  std::string measure = "slo";
  double queue_p99_ms = 1000;
  std::string range = "0.01:100";
  double tolerance = 0.03;
  std::optional<double> drain_s;
  bool json = false;
  std::optional<std::string> report_path;
  std::optional<int> jobs;
  bool no_progress = false;
};

CLI::App* add_capacity_command(CLI::App& app, CapacityOptions& options);

// 0 success, 2 bad input, 1 a failure while running.
int run_capacity(const CapacityOptions& options, std::ostream& out, std::ostream& err,
                 bool progress_to_terminal = false);

}  // namespace gangway
