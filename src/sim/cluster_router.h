// The router model of a cluster simulation (sim/cluster_spec.h): picks the node an arrival goes
// to, and the node a rejected request is retried at, from the nodes' own state as a cluster
// router would see it: live requests (least-loaded), the load report the core computes for
// `/load` (load-report: headroom per model, predicted wait), or the weights each node's agent
// check answers (agent-check: HAProxy's weighted round robin). Deterministic.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/request.h"
#include "sched/load_report.h"
#include "sched/scheduler.h"
#include "sim/cluster_agent_reply.h"
#include "sim/cluster_spec.h"

namespace gangway {

class ClusterRouter {
 public:
  ClusterRouter(const ClusterSpec& spec, uint64_t seed);

  // The first node for `request` among `nodes` (at least one).
  size_t pick(const RequestSpec& request, std::span<const Scheduler* const> nodes, Time now);
  // Another node than `rejected_at` for a retry; nullopt with a single node.
  std::optional<size_t> pick_other(const RequestSpec& request,
                                   std::span<const Scheduler* const> nodes, size_t rejected_at,
                                   Time now);
  // Whether `request` is pinned to node 0 (ClusterSpec::pinned_share, pinned_tenant).
  bool pinned(const RequestSpec& request) const;
  // agent-check: each node's weight in percent as the balancer last read it (0: drain or down).
  const std::vector<int>& agent_weights() const { return agent_weights_; }

 private:
  // The best node by the router's rule, skipping `skip` (if any).
  size_t best(const RequestSpec& request, std::span<const Scheduler* const> nodes,
              std::optional<size_t> skip, Time now);
  const LoadReport& report(std::span<const Scheduler* const> nodes, size_t node, Time now);
  // agent-check: asks every node whose check is due for its answer.
  void poll_agents(std::span<const Scheduler* const> nodes, Time now);
  // agent-check: smooth weighted round robin over the nodes with a weight, skipping `skip`.
  size_t weighted_round_robin(std::optional<size_t> skip);

  ClusterSpec spec_;
  uint64_t seed_;
  uint64_t next_round_robin_ = 0;
  std::vector<std::optional<LoadReport>> reports_;
  std::vector<int> agent_weights_;
  std::vector<Time> next_agent_check_;
  std::vector<int64_t> round_robin_credit_;
};

}  // namespace gangway
