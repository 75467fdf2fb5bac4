// The fluid bound beside a simulation's results (`gangway simulate --bound`): the most goodput
// any scheduler could reach on the scenario's measured arrivals (sim/fluid_bound.h), in the JSON
// and as a line per run saying how close each policy came.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <vector>

#include "cli/simulation_run.h"
#include "config/scenario.h"
#include "sim/fluid_bound.h"

namespace gangway {

// The bound over the arrivals of the scenario's measured window (warmup_s to duration_s).
FluidBound scenario_fluid_bound(const Scenario& scenario);

// {"goodput_rps", "offered_rps", "feasible_rps", "large_share", "large_batch", "small_batch",
//  "models": {MODEL: {"offered_rps", "goodput_rps"}}, "classes": {CLASS: {...}},
//  "runs": [{"policy", "mode", "routing", "goodput_rps", "fraction_of_bound"}]}; docs/cli.md.
nlohmann::json fluid_bound_json(const Scenario& scenario, const FluidBound& bound,
                                const std::vector<PolicyRun>& runs);

void print_fluid_bound(std::ostream& out, const FluidBound& bound,
                       const std::vector<PolicyRun>& runs);

}  // namespace gangway
