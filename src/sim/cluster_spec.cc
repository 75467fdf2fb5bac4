#include "sim/cluster_spec.h"

namespace gangway {

const char* to_string(ClusterRouterKind kind) {
  switch (kind) {
    case ClusterRouterKind::kRoundRobin:
      return "round-robin";
    case ClusterRouterKind::kLeastLoaded:
      return "least-loaded";
    case ClusterRouterKind::kLoadReport:
      return "load-report";
    case ClusterRouterKind::kAgentCheck:
      return "agent-check";
  }
  return "?";
}

bool balancer_retries(Reason reason) {
  return retry_elsewhere(reason) && reason != Reason::kRateLimited;
}

}  // namespace gangway
