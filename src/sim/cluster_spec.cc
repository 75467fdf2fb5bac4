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
  }
  return "?";
}

}  // namespace gangway
