// The command-line flags that change a scenario's workload, shared by `gangway simulate` and
// `gangway load` so that the same flags mean the same run in the simulator and against a server.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/scenario.h"

namespace gangway {

struct WorkloadOverrides {
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

}  // namespace gangway
