// The command-line flags that change a scenario's workload, shared by `gangway simulate` and
// `gangway load` so that the same flags mean the same run in the simulator and against a server.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/scenario.h"

namespace CLI {
class App;
}  // namespace CLI

namespace gangway {

struct WorkloadOverrides {
  // --set KEY.PATH=VALUE, in order: changes to the scenario file's tree, checked like the file.
  std::vector<std::string> settings;
  std::optional<uint64_t> seed;
  // The arrival window (--duration); must exceed the scenario's warm-up.
  std::optional<double> duration_s;
  // Multiplies every stream's (or the trace's) arrival rate (--rate-scale).
  std::optional<double> rate_scale;
  // Replay this trace instead of the scenario's streams (--trace, --trace-format; the format
  // defaults to mooncake for .jsonl files and azure otherwise).
  std::optional<std::string> trace_path;
  std::optional<std::string> trace_format;
};

// Applies the flags that are set; throws InputError naming the flag for a bad value.
void apply_workload_overrides(const WorkloadOverrides& overrides, Scenario& scenario);

// Reads the scenario file with the --set changes (scenario_setting.h); throws InputError.
Scenario load_scenario_with_settings(const std::string& path,
                                     const std::vector<std::string>& settings);
std::vector<ScenarioSetting> parse_settings(const std::vector<std::string>& settings);

// Registers --set on a subcommand.
void add_set_option(CLI::App& command, std::vector<std::string>& settings);

// --seeds: "N" (N seeds counting up from `first`) or "A..B" (A to B inclusive); throws
// InputError naming --seeds.
std::vector<uint64_t> parse_seeds(const std::string& text, uint64_t first);

}  // namespace gangway
