// `gangway simulate`: runs a scenario in the simulator under one or more gang policies and
// routing rules (same seed, same arrivals) and prints them side by side, or as one JSON document
// with --json; with --seeds, on several seeds with each figure's mean and spread; with --report,
// also as an HTML page of plots.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/workload_overrides.h"

namespace CLI {
class App;
}  // namespace CLI

namespace gangway {

struct SimulateOptions : WorkloadOverrides {
  std::string scenario_path;
  std::vector<std::string> policies;
  // Small-model routing rules; each policy runs under each (default: the scenario's).
  std::vector<std::string> routings;
  std::optional<double> drain_s;
  bool json = false;
  std::optional<std::string> timeline_path;
  // "START:END" in seconds of simulated time: the part of the run the timeline holds.
  std::optional<std::string> timeline_window;
  // Bin width of the time series added to each run's JSON (runs[].series), ms.
  std::optional<double> series_ms;
  // Admission control off (rate limits and queue caps still hold): the comparison baseline.
  bool no_admission = false;
  // Add the fluid upper bound on goodput (sim/fluid_bound.h) and each run's distance to it.
  bool bound = false;
  // "N" or "A..B": run every policy on each of these seeds and summarise (--seeds).
  std::optional<std::string> seeds;
  // Write an HTML report with plots here (--report).
  std::optional<std::string> report_path;
  // Simulations run at once (--jobs; default: the machine's hardware threads).
  std::optional<int> jobs;
};

// Registers the subcommand and its flags; `options` must outlive parsing.
CLI::App* add_simulate_command(CLI::App& app, SimulateOptions& options);

// Runs it. Returns the process exit status: 0 success, 2 bad input (scenario, trace, flags),
// 1 a failure while running. Messages go to `err`.
int run_simulate(const SimulateOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gangway
