// The router model of a cluster simulation (sim/cluster_spec.h): picks the node an arrival goes
// to, and the node a rejected request is retried at, from the nodes' own state as a cluster
// router would see it: live requests (least-loaded) or the load report the core computes for
// `/load` (load-report: headroom per model, predicted wait). Deterministic.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/request.h"
#include "sched/load_report.h"
#include "sched/scheduler.h"
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
  // Whether `request` is pinned to node 0 (ClusterSpec::pinned_share).
  bool pinned(const RequestSpec& request) const;

 private:
  // The best node by the router's rule, skipping `skip` (if any).
  size_t best(const RequestSpec& request, std::span<const Scheduler* const> nodes,
              std::optional<size_t> skip, Time now);
  const LoadReport& report(std::span<const Scheduler* const> nodes, size_t node, Time now);

  ClusterSpec spec_;
  uint64_t seed_;
  uint64_t next_round_robin_ = 0;
  std::vector<std::optional<LoadReport>> reports_;
};

}  // namespace gangway
