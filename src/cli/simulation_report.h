// Renders the results of `gangway simulate`: one JSON document (the public contract that outside
// tools read; key names must not change) or a side-by-side table for a person.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <vector>

#include "cli/simulation_run.h"
#include "config/scenario.h"

namespace gangway {

// {"gangway_version","scenario","seed","runs":[{"policy","mode","sim","node","classes","models",
//  "total"}]}; see docs/cli.md for every key.
nlohmann::json simulation_report_json(const Scenario& scenario, const std::vector<PolicyRun>& runs);

// A table with one row per policy (goodput, SLO attainment, latencies, GPU-time losses) and a
// breakdown per SLO class and model below it.
void print_simulation_table(std::ostream& out, const Scenario& scenario,
                            const std::vector<PolicyRun>& runs);

}  // namespace gangway
