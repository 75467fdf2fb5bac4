// Reads a trace replay (`workload.trace:`) and trace mapping rules (its `mapping:` and the
// top-level `trace_mapping:` used when the command line's --trace replaces the workload): which
// rows go to which model, SLO class and tenant.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/scenario_names.h"
#include "config/yaml_reader.h"
#include "workload/trace/trace_spec.h"

namespace gangway {

// The mapping used when a file gives none: every row to the first small model, the first SLO
// class and the first tenant.
std::vector<TraceMappingRule> default_trace_mapping(const ScenarioNames& names);

// A list of rules. With `format` known, a rule's trace_model is checked against it (only
// burstgpt traces have a model column).
std::vector<TraceMappingRule> read_trace_mapping(const YamlValue& value, const ScenarioNames& names,
                                                 std::optional<TraceFormat> format);

// The `trace:` mapping. The file must exist and have the format's header; `default_rules` apply
// when it has no `mapping:`.
TraceSpec read_trace(const YamlValue& value, const ScenarioNames& names,
                     const std::vector<TraceMappingRule>& default_rules,
                     const std::string& scenario_path);

}  // namespace gangway
