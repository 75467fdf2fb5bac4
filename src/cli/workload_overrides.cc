#include "cli/workload_overrides.h"

#include "core/input_error.h"
#include "workload/trace/trace_spec.h"

namespace gangway {

void apply_workload_overrides(const WorkloadOverrides& overrides, Scenario& scenario) {
  if (overrides.seed) scenario.seed = *overrides.seed;
  if (overrides.duration_s) {
    if (!(*overrides.duration_s > 0)) {
      throw InputError::at("", std::nullopt, "--duration", "expected seconds > 0");
    }
    scenario.duration = seconds_to_duration(*overrides.duration_s);
    if (scenario.warmup >= scenario.duration) {
      throw InputError::at("", std::nullopt, "--duration",
                           "expected more than the scenario's warmup_s (" +
                               std::to_string(to_seconds(scenario.warmup)) + " s)");
    }
  }
  if (overrides.trace_format && !overrides.trace_path) {
    throw InputError::at("", std::nullopt, "--trace-format", "needs --trace FILE");
  }
  if (overrides.trace_path) {
    TraceSpec trace;
    trace.path = *overrides.trace_path;
    trace.format =
        overrides.trace_format
            ? parse_trace_format(*overrides.trace_format, "", "--trace-format")
            : (trace.path.ends_with(".jsonl") ? TraceFormat::mooncake : TraceFormat::azure);
    trace.rules = scenario.trace_mapping;
    trace.origin = "--trace";
    scenario.streams.clear();
    scenario.trace = trace;
  }
  if (overrides.rate_scale) {
    if (!(*overrides.rate_scale > 0)) {
      throw InputError::at("", std::nullopt, "--rate-scale", "expected a factor > 0");
    }
    for (StreamSpec& stream : scenario.streams) stream.arrival.rate_scale *= *overrides.rate_scale;
    if (scenario.trace) scenario.trace->rate_scale *= *overrides.rate_scale;
  }
  if (scenario.trace) validate(*scenario.trace);
}

}  // namespace gangway
