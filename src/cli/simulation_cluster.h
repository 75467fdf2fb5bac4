// `gangway simulate` on a scenario with `cluster:`: several nodes behind a router model
// (sim/cluster_simulator.h), and their part of the report: the `cluster` block of a run's JSON
// (docs/cli.md) and a per-node table.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/simulation_run.h"
#include "config/scenario.h"

namespace gangway {

// Runs `scenario` (which has a cluster) under `policy`: every node its own scheduler core with
// the scenario's configuration. The run's cluster-wide statistics count each request once.
PolicyRun run_cluster_policy(const Scenario& scenario, const PolicySpec& policy,
                             const std::string& routing, Duration series_bin);

// {"nodes", "router", "spillover_enabled", "pinned_share", "report_interval_ms",
//  "spillover": {...}, "per_node": [...]}; docs/cli.md lists every key.
nlohmann::json cluster_json(const PolicyRun& run);

// One row per node of each cluster run, and the spillover counts.
void print_cluster_table(std::ostream& out, const std::vector<PolicyRun>& runs);

}  // namespace gangway
