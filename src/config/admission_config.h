// Reads the scenario's `admission:` section (AdmissionOptions: rate limits, queue caps, the
// overload ladder, queue order) and its `faults:` list (FaultSpec). docs/scenario.md lists
// every key; docs/overload.md says what they do.
#pragma once

#include <vector>

#include "config/scenario_names.h"
#include "config/yaml_reader.h"
#include "sched/admission/admission_options.h"
#include "sim/fault_spec.h"

namespace gangway {

AdmissionOptions read_admission(const YamlValue& value, const ScenarioNames& names);
std::vector<FaultSpec> read_faults(const YamlValue& value, const NodeSpec& node);

}  // namespace gangway
