// Reads a token-length distribution (a stream's `prompt_tokens:` or `output_tokens:`): a
// constant, geometric, lognormal or empirical distribution, the last given as a list of values
// or as one column of a trace file, read with the simulator's own trace readers.
#pragma once

#include <cstdint>
#include <string>

#include "config/yaml_reader.h"
#include "workload/trace/trace_spec.h"
#include "workload/workload_spec.h"

namespace gangway {

// Which column of a trace an empirical distribution draws from.
enum class TraceLengthColumn : uint8_t { prompt, output };

// A bare whole number is a constant; a mapping has `dist:` (default constant) and the keys that
// distribution reads. `default_column` is the trace column used when from_trace names none;
// `scenario_path` resolves relative trace paths.
LengthSpec read_length(const YamlValue& value, TraceLengthColumn default_column,
                       const std::string& scenario_path);

// `format:` of a trace (azure, mooncake, burstgpt), as the trace layer spells them.
TraceFormat read_trace_format(const YamlValue& value);

}  // namespace gangway
