// `gangway simulate` on a scenario whose `server.engines` names engine processes (vllm, sglang,
// openai): the request-level mode of `gangway serve` in front of them, simulated with one
// continuous-batching engine model per process (sim/request_level_simulator.h, docs/engines.md).
#pragma once

#include "cli/simulation_run.h"
#include "config/scenario.h"

namespace gangway {

// Runs `scenario` under `policy` in request-level mode: the tier mode, holds and longest large
// wait from `policy` as `gangway serve` takes them (config/request_level_setup.h).
PolicyRun run_engines_policy(const Scenario& scenario, const PolicySpec& policy,
                             TimelineWriter* timeline, Duration series_bin);

}  // namespace gangway
