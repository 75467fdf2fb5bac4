// Renders the results of `gangway simulate` as one JSON document (the public contract that outside
// tools read; key names must not change). The table for a person is simulation_table.h.
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

}  // namespace gangway
