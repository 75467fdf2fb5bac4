// A cluster simulation (the scenario's `cluster:` section): several identical nodes, each its own
// scheduler core with the scenario's configuration, behind a router model, to study spillover
// between nodes (docs/overload.md#several-nodes). Only the simulator reads it; the real
// multi-node path is an existing load balancer in front of `gangway serve`.
#pragma once

#include <cstdint>
#include <string>

#include "core/time.h"

namespace gangway {

enum class ClusterRouterKind : uint8_t {
  kRoundRobin,   // arrival i goes to node i mod N; a retry to the next node
  kLeastLoaded,  // the node with the fewest live requests
  kLoadReport,   // the node with the most headroom for the model (compute_load_report), else the
                 // shortest predicted wait
};

const char* to_string(ClusterRouterKind kind);

struct ClusterSpec {
  int nodes = 1;
  ClusterRouterKind router = ClusterRouterKind::kLoadReport;
  // A request rejected with a retry-elsewhere reason is sent once to another node.
  bool spillover = true;
  // This share of arrivals (a hash of the seed and the request id) goes to node 0 first whatever
  // the router says: a hot tenant, sticky sessions; the way to skew one node's load.
  double pinned_share = 0;
  // How old a node's load report may be when the router reads it (0: fresh at every arrival).
  Duration report_interval{0};
};

}  // namespace gangway
