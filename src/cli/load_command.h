// `gangway load`: drives a running server with a scenario's workload, open loop, and reports
// client-side latency per SLO class and model: a table, or with --json the simulator's STATS
// document shape, so a load run and `gangway simulate` of the same scenario compare side by side.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "cli/workload_overrides.h"

namespace CLI {
class App;
}  // namespace CLI

namespace gangway {

struct LoadCommandOptions : WorkloadOverrides {
  std::string url;
  std::string scenario_path;
  std::string endpoint = "completions";
  std::optional<double> drain_timeout_s;
  int max_connections = 16384;
  bool json = false;
  bool no_progress = false;
};

CLI::App* add_load_command(CLI::App& app, LoadCommandOptions& options);

// Returns 0 when the run finished (whatever the server answered), 2 for bad input, 1 when the
// server could not be reached at all.
int run_load(const LoadCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gangway
