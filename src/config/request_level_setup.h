// The request-level core's inputs from a scenario's `server.engines`: one EngineDescriptor per
// engine process (in the order of the section: each model's URLs in turn) and the core's options
// from the policy and admission settings. `gangway serve` (server/scheduler_loop_engines.cc)
// and `gangway simulate` (sim/request_level_simulator.h) build their cores from the same.
#pragma once

#include <vector>

#include "config/engine_config.h"
#include "sched/policy_spec.h"
#include "sched/request_level/request_level_core.h"

namespace gangway {

// REQUIRES: engines.real().
std::vector<EngineDescriptor> engine_descriptors(const NodeSpec& node,
                                                 const EnginesConfig& engines);

// Whether `policy` asks for exclusive mode: gangway's mode (gangway_mode(): `mode`, or the one
// its alias fixes), else `mode: exclusive`.
bool runs_exclusive(const PolicySpec& policy);

// Lease mode when every engine can pause and the policy does not run exclusive; the holds and the
// large model's longest wait from `policy`, the queue settings from the scheduler's admission.
RequestLevelOptions request_level_options(const EnginesConfig& engines,
                                          const SchedulerOptions& scheduler,
                                          const PolicySpec& policy);

}  // namespace gangway
