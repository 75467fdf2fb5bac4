// Several nodes behind a router model, in one deterministic virtual-time simulation, to study
// spillover (docs/overload.md#several-nodes). Each node is its own scheduler core (the same node
// and configuration, its own gang policy instance) driven by a NodeDriver; all share one event
// list. Each arrival goes to the node the ClusterRouter picks; a request that node rejects with
// a reason a balancer retries (balancer_retries(): queue full, deadline unmeetable, shed, ...)
// is sent to another node, at the same instant, if spillover is on, up to `retries` times (each
// time to another node than the one that just rejected it). The scenario's faults are injected
// on node 0 only.
//
// Every request that arrives ends in exactly one terminal outcome across the nodes: the cluster
// metrics count each once, by its last outcome; a node's metrics count every request submitted
// to it (a retried request at every node it was sent to).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "sim/arrival_feed.h"
#include "sim/cluster_router.h"
#include "sim/cluster_spec.h"
#include "sim/node_driver.h"
#include "sim/simulator.h"

namespace gangway {

// Counted for requests arriving in the measurement window.
struct SpilloverCounters {
  // Attempts after a rejection with a reason a balancer retries: each sent to another node
  // (a request retried twice counts twice).
  int64_t retried = 0;
  // Of those: accepted by that node; rejected there too.
  int64_t admitted_elsewhere = 0;
  int64_t rejected_again = 0;
  // Requests rejected by their first node with a retry-elsewhere reason and not retried at all
  // (spillover off, or one node); a rejection after a retry counts in rejected_again instead.
  int64_t not_retried = 0;
  // The rejection reason each retry followed, by Reason value.
  std::array<int64_t, kReasonCount> retried_by_reason{};
};

struct ClusterNodeResult {
  RunMetrics metrics;  // every request submitted to this node (in the window)
  NodeTimeAccount node_time;
  int64_t gang_phases = 0;
  int64_t first_choice = 0;  // arrivals the router sent here first (in the window)
  int64_t retries_received = 0;
};

struct ClusterResult {
  // metrics: each request once, by its final outcome; node_time and gang_phases: node 0's.
  SimulationResult total;
  std::vector<ClusterNodeResult> nodes;
  SpilloverCounters spillover;
};

class ClusterSimulator {
 public:
  using PolicyFactory = std::function<std::unique_ptr<GangPolicy>()>;
  // `source` is the whole cluster's traffic, read lazily; not owned. options.timeline is not
  // used (no timeline for a cluster).
  ClusterSimulator(const NodeSpec& node, const SchedulerOptions& scheduler_options,
                   const PolicyFactory& make_policy, const ClusterSpec& cluster, uint64_t seed,
                   RequestSource& source, SimulationOptions options);
  ~ClusterSimulator();

  ClusterResult run();
  size_t node_count() const { return drivers_.size(); }
  const Scheduler& scheduler(size_t node) const { return drivers_[node]->scheduler(); }

 private:
  void route_next_arrival();
  bool measured(Time arrival) const { return arrival >= Time::zero() + options_.warmup; }
  bool all_idle() const;
  void sample_series();

  const NodeSpec& node_;
  ClusterSpec cluster_;
  SimulationOptions options_;
  ArrivalFeed arrivals_;
  EventQueue events_;
  std::vector<std::unique_ptr<NodeDriver>> drivers_;
  std::vector<const Scheduler*> schedulers_;
  ClusterRouter router_;
  Time now_;
  // A rejection being retried elsewhere: its record at the node is not the cluster's.
  std::optional<RequestId> retrying_;
  // The reason of the rejection the attempt being made follows.
  std::optional<Reason> previous_rejection_;
  std::optional<TimeSeries> series_;
  int64_t events_processed_ = 0;
  int64_t requests_ = 0;
  RunMetrics metrics_;
  std::vector<int64_t> first_choice_;
  std::vector<int64_t> retries_received_;
  SpilloverCounters spillover_;
};

}  // namespace gangway
