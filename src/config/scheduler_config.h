// Reads a scenario's `scheduler:` section (the core's options: the KV split between the large and
// the small models, static or dynamic, the admission watermark, prefix caching and the host
// tier, preemption, the routing rule) and its `policy:` section (which gang policy, and its
// parameters), checking the policy against the registry's names and ranges.
#pragma once

#include "config/yaml_reader.h"
#include "sched/policy_spec.h"
#include "sched/scheduler.h"

namespace gangway {

SchedulerOptions read_scheduler_options(const YamlValue& value);
// Checks options that depend on the node (swap preemption needs host memory); `scheduler` is the
// section the options were read from, for the error's location.
void check_scheduler_against_node(const YamlValue& scheduler, const SchedulerOptions& options,
                                  const NodeSpec& node);

// `policy:` as a name ("fcfs") or a mapping {name, slice_period_ms, slice_large_share}.
PolicySpec read_policy(const YamlValue& value);
// Checks the policy's horizons against the node: a lease (lease_min_ms, lease_max_ms), an
// exclusive phase (exclusive_phase_max_ms) and time-slice's large-model window must each hold at
// least one large-model iteration (the shortest: one decode step, from the cost model). `policy`
// is the section the spec was read from, for the error's location.
void check_policy_against_node(const YamlValue& policy, const PolicySpec& spec,
                               const NodeSpec& node);

}  // namespace gangway
