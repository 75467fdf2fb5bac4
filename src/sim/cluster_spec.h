// A cluster simulation (the scenario's `cluster:` section): several identical nodes, each its own
// scheduler core with the scenario's configuration, behind a router model, to study spillover
// between nodes (docs/overload.md#several-nodes). Only the simulator reads it; the real
// multi-node path is an existing load balancer in front of `gangway serve`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/ids.h"
#include "core/outcome.h"
#include "core/time.h"

namespace gangway {

enum class ClusterRouterKind : uint8_t {
  kRoundRobin,   // arrival i goes to node i mod N; a retry to the next node
  kLeastLoaded,  // the node with the fewest live requests
  kLoadReport,   // the node with the most headroom for the model (compute_load_report), else the
                 // shortest predicted wait
  kAgentCheck,   // HAProxy's weighted round robin with the weights each node's agent check
                 // answers (sim/cluster_agent_reply.h), polled every agent_interval
};

const char* to_string(ClusterRouterKind kind);

struct ClusterSpec {
  int nodes = 1;
  ClusterRouterKind router = ClusterRouterKind::kLoadReport;
  // A request rejected with a retry-elsewhere reason (balancer_retries()) is sent to another node.
  bool spillover = true;
  // How many times a request may be sent again, each time to another node than the one that
  // just rejected it (HAProxy's `retries` with `option redispatch 1`).
  int retries = 1;
  // This share of arrivals (a hash of the seed and the request id) goes to node 0 first whatever
  // the router says: a hot tenant, sticky sessions; the way to skew one node's load.
  double pinned_share = 0;
  // This tenant's arrivals go to node 0 first, whatever the router says (a balancer rule that
  // pins a tenant to one node, e.g. HAProxy's `use-server` on the tenant header).
  std::optional<TenantId> pinned_tenant;
  // How old a node's load report may be when the router reads it (0: fresh at every arrival).
  Duration report_interval{0};
  // agent-check: how often the balancer asks each node for its weight (HAProxy's agent-inter).
  // Node i is asked at i * agent_interval / nodes, then every agent_interval (HAProxy spreads
  // its checks over the interval the same way).
  Duration agent_interval = std::chrono::milliseconds(250);
};

// Whether a balancer in front of gangway nodes sends a request that a node rejected with
// `reason` to another node: the retry-elsewhere reasons the server answers with 503 (what
// HAProxy's `retry-on 503` acts on). rate_limited is answered 429, "retry here later": HAProxy
// 2.6 cannot retry on 429, and a tenant's rate limit holds per node.
bool balancer_retries(Reason reason);

}  // namespace gangway
