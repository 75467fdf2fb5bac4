// Reads a scenario's `scheduler:` section (the core's options: the static KV split between the
// large and the small models, the admission watermark) and its `policy:` section (which gang
// policy, and its parameters), checking the policy against the registry's names and ranges.
#pragma once

#include "config/yaml_reader.h"
#include "sched/policy_spec.h"
#include "sched/scheduler.h"

namespace gangway {

SchedulerOptions read_scheduler_options(const YamlValue& value);

// `policy:` as a name ("fcfs") or a mapping {name, slice_period_ms, slice_large_share}.
PolicySpec read_policy(const YamlValue& value);

}  // namespace gangway
