#include "sim/cluster_router.h"

#include <algorithm>

#include "workload/rng.h"

namespace gangway {

ClusterRouter::ClusterRouter(const ClusterSpec& spec, uint64_t seed)
    : spec_(spec),
      seed_(seed),
      reports_(static_cast<size_t>(spec.nodes)),
      agent_weights_(static_cast<size_t>(spec.nodes), 100),
      round_robin_credit_(static_cast<size_t>(spec.nodes), 0) {
  // HAProxy starts every server's checks at a different offset within the interval.
  for (int i = 0; i < spec.nodes; ++i) {
    next_agent_check_.push_back(Time::zero() + spec.agent_interval * i / spec.nodes);
  }
}

bool ClusterRouter::pinned(const RequestSpec& request) const {
  if (spec_.pinned_tenant && request.tenant == *spec_.pinned_tenant) return true;
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
  if (spec_.router == ClusterRouterKind::kAgentCheck) {
    poll_agents(nodes, now);
    return weighted_round_robin(std::nullopt);
  }
  return best(request, nodes, std::nullopt, now);
}

std::optional<size_t> ClusterRouter::pick_other(const RequestSpec& request,
                                                std::span<const Scheduler* const> nodes,
                                                size_t rejected_at, Time now) {
  if (nodes.size() < 2) return std::nullopt;
  if (spec_.router == ClusterRouterKind::kRoundRobin) {
    // HAProxy's redispatch asks its balancing algorithm again: the next node in the rotation
    // that new requests share, skipping the one that turned the request away (so the retries
    // of a hot node spread over all the others rather than all landing on its neighbour).
    size_t next = next_round_robin_++ % nodes.size();
    if (next == rejected_at) next = next_round_robin_++ % nodes.size();
    return next;
  }
  if (spec_.router == ClusterRouterKind::kAgentCheck) {
    poll_agents(nodes, now);
    return weighted_round_robin(rejected_at);
  }
  return best(request, nodes, rejected_at, now);
}

void ClusterRouter::poll_agents(std::span<const Scheduler* const> nodes, Time now) {
  const AgentReplyOptions options;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (next_agent_check_[i] > now) continue;
    const AgentReply reply =
        agent_reply(compute_load_report(nodes[i]->state(), now), false, options);
    agent_weights_[i] = reply.state == AgentReply::State::kReady ? reply.weight_percent : 0;
    // The next check after now, on the node's own schedule.
    const Duration interval = std::max(spec_.agent_interval, Duration(1));
    const int64_t missed = (now - next_agent_check_[i]) / interval;
    next_agent_check_[i] += interval * (missed + 1);
  }
}

size_t ClusterRouter::weighted_round_robin(std::optional<size_t> skip) {
  // Smooth weighted round robin: every eligible node earns its weight, the richest is chosen
  // and pays the total. Over any window each node is chosen in proportion to its weight, as
  // with HAProxy's roundrobin; where no node has a weight (all drained or down) HAProxy has no
  // server, and the model falls back to plain round robin over the nodes it may use.
  int64_t total = 0;
  std::optional<size_t> chosen;
  for (size_t i = 0; i < agent_weights_.size(); ++i) {
    if ((skip && *skip == i) || agent_weights_[i] <= 0) continue;
    round_robin_credit_[i] += agent_weights_[i];
    total += agent_weights_[i];
    if (!chosen || round_robin_credit_[i] > round_robin_credit_[*chosen]) chosen = i;
  }
  if (!chosen) {
    const size_t n = agent_weights_.size();
    size_t next = next_round_robin_++ % n;
    if (skip && next == *skip && n > 1) next = next_round_robin_++ % n;
    return next;
  }
  round_robin_credit_[*chosen] -= total;
  return *chosen;
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
