// What a node answers a load balancer's agent check (HAProxy's `agent-check`), computed from its
// load report, so that `gangway serve` (server/agent_check.h) and the simulator's model of the
// balancer (ClusterRouterKind::kAgentCheck) use the same weights. docs/cluster.md has the mapping
// and docs/decisions/agent-check-weights.md why it is so.
//
// The answer is one line of HAProxy's agent grammar:
//   "ready 73%"          serving: the weight, in percent of the server's configured weight
//   "drain"              draining (SIGTERM): no new requests, the ones in flight finish
//   "ready down #TEXT"   no capacity: no model can run on the node now (every engine it runs on
//                        is lost); the balancer marks it down until its health check passes again
// "ready" is in every answer but the draining one because only the agent can undo the DRAIN it
// set: a node restarted after a drain must turn the admin state back.
#pragma once

#include <cstdint>
#include <string>

#include "core/time.h"
#include "sched/load_report.h"

namespace gangway {

struct AgentReplyOptions {
  // How far ahead a pending gang lease counts against the small models' headroom: a balancer
  // keeps the weight until its next check, so requests sent during that time meet the lease.
  Duration horizon = std::chrono::milliseconds(1000);
  // The weight of a node that can serve but has no headroom left (percent, >= 1). Never 0 while
  // the node can serve: a cluster whose nodes are all hot still spreads its traffic over them and
  // lets each node's admission control decide, rather than have the balancer refuse it.
  int min_weight_percent = 1;
};

struct AgentReply {
  enum class State : uint8_t { kReady, kDrain, kDown };
  State state = State::kReady;
  // kReady: the weight, min_weight_percent to 100.
  int weight_percent = 100;
  // kDown: why (sent after '#', shown on the balancer's status page).
  std::string reason;
};

// The node's weight in (0, 1] before the floor. Per model that can run: 1 / (1 + p^2), where p,
// the pressure, is its predicted wait (with a pending gang lease spread over the horizon) over
// the tightest TTFT target, and at least 1 when its headroom_rps is 0 (it turned arrivals away
// in the last second); 0 for a model that cannot run. Averaged over the models with each one's
// live requests + 1 as weights, then times the overload ladder's factor for the node's rung.
// Flat while nodes are far from their targets (no reshuffling of a healthy cluster), steep
// past them, and never 0 for a node that can serve, so that among overloaded nodes the more
// overloaded one still gets less (docs/decisions/agent-check-weights.md).
double agent_weight_fraction(const LoadReport& report, const AgentReplyOptions& options);
// The overload ladder's factor on the weight for a rung name (to_string(OverloadLevel)); 1 for
// an unknown name.
double ladder_weight_factor(const std::string& level);

AgentReply agent_reply(const LoadReport& report, bool draining, const AgentReplyOptions& options);
// The line sent on the agent port, ending in "\n".
std::string agent_line(const AgentReply& reply);

}  // namespace gangway
