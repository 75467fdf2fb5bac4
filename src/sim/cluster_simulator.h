// Several nodes behind a router model, in one deterministic virtual-time simulation, to study
// spillover (docs/overload.md#several-nodes). Each node is its own scheduler core (the same node
// and configuration, its own gang policy instance) driven by a NodeDriver; all share one event
// list. Each arrival goes to the node the ClusterRouter picks. A request that a node turns away
// before its first token with a reason a balancer retries (balancer_retries(): queue full,
// deadline unmeetable, shed, ...), whether at arrival or later from its queue (a shed), is sent
// to another node at that instant if spillover is on, up to `retries` times, each time to
// another node than the one that just turned it away: what HAProxy does with a 503 that comes
// before any output. The scenario's faults are injected on node 0 only.
//
// Every request that arrives ends in exactly one terminal outcome across the nodes: the cluster
// metrics count each once, by its last outcome; a node's metrics count every request submitted
// to it (a retried request at every node it was sent to).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sim/arrival_feed.h"
#include "sim/cluster_router.h"
#include "sim/cluster_spec.h"
#include "sim/node_driver.h"
#include "sim/simulator.h"

namespace gangway {

// Counted for requests arriving in the measurement window.
struct SpilloverCounters {
  // Attempts after a rejection (at arrival or from a queue, before the first token) with a
  // reason a balancer retries: each sent to another node (a request retried twice counts
  // twice).
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
  // A request on its way through the cluster: what to send again, and how often it was.
  struct Attempt {
    WorkloadItem item;
    int sent_on = 0;
    bool counted = false;  // arrived in the measurement window
  };
  struct Rejection {
    RequestId id;
    size_t node = 0;
    Reason reason = Reason::kNone;
  };
  void route_next_arrival();
  // A node's record of a request: its outcome, or a rejection to send on.
  void on_finished(size_t node, const RequestRecord& record);
  void send_on_rejections();
  bool measured(Time arrival) const { return arrival >= Time::zero() + options_.warmup; }
  bool all_idle() const;
  void sample_series();

  ClusterSpec cluster_;
  SimulationOptions options_;
  ArrivalFeed arrivals_;
  EventQueue events_;
  std::vector<std::unique_ptr<NodeDriver>> drivers_;
  std::vector<const Scheduler*> schedulers_;
  ClusterRouter router_;
  Time now_;
  // Requests that have not ended yet, by id.
  std::unordered_map<uint64_t, Attempt> in_flight_;
  // Rejections to send on at the current instant, in the order they happened.
  std::deque<Rejection> to_send_on_;
  std::optional<TimeSeries> series_;
  int64_t events_processed_ = 0;
  int64_t requests_ = 0;
  RunMetrics metrics_;
  std::vector<int64_t> first_choice_;
  std::vector<int64_t> retries_received_;
  SpilloverCounters spillover_;
};

}  // namespace gangway
