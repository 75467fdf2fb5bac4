// Reads a scenario's `workload:` section: either synthetic `streams:` (each one model, class and
// tenant with an arrival process, length distributions, shared prefixes and sessions) or a
// `trace:` to replay (see trace_config). Names are resolved to ids through ScenarioNames.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/scenario_names.h"
#include "config/yaml_reader.h"
#include "workload/trace/trace_spec.h"
#include "workload/workload_spec.h"

namespace gangway {

struct WorkloadSection {
  std::vector<StreamSpec> streams;
  std::optional<TraceSpec> trace;
};

// `value` is the `workload:` mapping, or nullopt when the file has none (an error: the workload
// would be empty); `where` is then the value the error is reported at. A trace without its own
// `mapping:` uses `default_rules`.
WorkloadSection read_workload(const std::optional<YamlValue>& value, const YamlValue& where,
                              const ScenarioNames& names,
                              const std::vector<TraceMappingRule>& default_rules,
                              const std::string& scenario_path);

// One stream (an item of `streams:`); `origin` becomes "FILE:LINE" of the item.
StreamSpec read_stream(const YamlValue& value, const ScenarioNames& names,
                       const std::string& scenario_path);

ArrivalSpec read_arrival(const YamlValue& value);

}  // namespace gangway
