// Reads the scenario's `cluster:` section (sim/cluster_spec.h): several nodes behind a router
// model in the simulator. docs/scenario.md#cluster lists the keys.
#pragma once

#include "config/scenario_names.h"
#include "config/yaml_reader.h"
#include "sim/cluster_spec.h"

namespace gangway {

// Most nodes a cluster simulation may have.
inline constexpr int kMaxClusterNodes = 64;

// `names` resolves pinned_tenant (the tenants are read first).
ClusterSpec read_cluster(const YamlValue& value, const ScenarioNames& names);

}  // namespace gangway
