#include "sim/cluster_router.h"

#include "workload/rng.h"

namespace gangway {

ClusterRouter::ClusterRouter(const ClusterSpec& spec, uint64_t seed)
    : spec_(spec), seed_(seed), reports_(static_cast<size_t>(spec.nodes)) {}

bool ClusterRouter::pinned(const RequestSpec& request) const {
  if (spec_.pinned_share <= 0) return false;
  // The top 53 bits of a hash of (seed, id), as a uniform number in [0, 1).
  const uint64_t hash = mix_pair(seed_ ^ 0x636c7573746572ULL, request.id.value());
  return static_cast<double>(hash >> 11) * 0x1.0p-53 < spec_.pinned_share;
}

size_t ClusterRouter::pick(const RequestSpec& request, std::span<const Scheduler* const> nodes,
                           Time now) {
  if (nodes.size() == 1) return 0;
  if (pinned(request)) return 0;
  if (spec_.router == ClusterRouterKind::kRoundRobin) return next_round_robin_++ % nodes.size();
  return best(request, nodes, std::nullopt, now);
}

std::optional<size_t> ClusterRouter::pick_other(const RequestSpec& request,
                                                std::span<const Scheduler* const> nodes,
                                                size_t rejected_at, Time now) {
  if (nodes.size() < 2) return std::nullopt;
  if (spec_.router == ClusterRouterKind::kRoundRobin) return (rejected_at + 1) % nodes.size();
  return best(request, nodes, rejected_at, now);
}

const LoadReport& ClusterRouter::report(std::span<const Scheduler* const> nodes, size_t node,
                                        Time now) {
  std::optional<LoadReport>& cached = reports_[node];
  if (!cached || now - cached->at >= spec_.report_interval || now < cached->at) {
    cached = compute_load_report(nodes[node]->state(), now);
  }
  return *cached;
}

size_t ClusterRouter::best(const RequestSpec& request, std::span<const Scheduler* const> nodes,
                           std::optional<size_t> skip, Time now) {
  std::optional<size_t> chosen;
  if (spec_.router == ClusterRouterKind::kLeastLoaded) {
    int64_t fewest = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (skip && *skip == i) continue;
      const int64_t live = nodes[i]->live_requests();
      if (!chosen || live < fewest) {
        chosen = i;
        fewest = live;
      }
    }
    return *chosen;
  }
  // load-report: the most headroom for the request's model; where none has any, the shortest
  // predicted wait. Ties go to the lower node index.
  const size_t model = request.model.value();
  double best_headroom = 0;
  double best_wait = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (skip && *skip == i) continue;
    const LoadReport& load = report(nodes, i, now);
    const ModelLoad& m = load.models.at(model);
    const bool better =
        !chosen || m.headroom_rps > best_headroom ||
        (m.headroom_rps == best_headroom && best_headroom <= 0 && m.predicted_wait_ms < best_wait);
    if (better) {
      chosen = i;
      best_headroom = m.headroom_rps;
      best_wait = m.predicted_wait_ms;
    }
  }
  return *chosen;
}

}  // namespace gangway
