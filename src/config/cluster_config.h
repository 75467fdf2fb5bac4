// Reads the scenario's `cluster:` section (sim/cluster_spec.h): several nodes behind a router
// model in the simulator. docs/scenario.md#cluster lists the keys.
#pragma once

#include "config/yaml_reader.h"
#include "sim/cluster_spec.h"

namespace gangway {

// Most nodes a cluster simulation may have.
inline constexpr int kMaxClusterNodes = 64;

ClusterSpec read_cluster(const YamlValue& value);

}  // namespace gangway
