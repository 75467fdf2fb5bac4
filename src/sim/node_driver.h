// Drives one node's scheduler core in virtual time: carries out its launches by scheduling their
// completions at the time the cost model says (with the faults injected), feeds it iteration
// completions, timer wakeups and faults, and accounts its requests and GPU time. The event list
// and the arrivals belong to the caller: the single-node Simulator, or the ClusterSimulator that
// runs several nodes (each its own NodeDriver, all on one event list, told apart by
// SimEvent::node) behind a router model.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/node_spec.h"
#include "metrics/node_time_account.h"
#include "metrics/run_metrics.h"
#include "metrics/timeline_writer.h"
#include "sched/scheduler.h"
#include "sim/event_queue.h"
#include "sim/fault_spec.h"
#include "sim/measurement_window.h"
#include "workload/request_source.h"

namespace gangway {

struct NodeDriverOptions {
  // The measurement window [warmup, duration): requests arriving before warmup are not counted,
  // node time is accounted inside it.
  Duration warmup{0};
  Duration duration = std::chrono::seconds(60);
  // Optional GPU timeline (Chrome trace); not owned.
  TimelineWriter* timeline = nullptr;
  std::vector<FaultSpec> faults;
  // SimEvent::node of this node's events.
  uint16_t node = 0;
};

class NodeDriver {
 public:
  // Called for every request that ends here (after the node's own metrics saw it).
  using FinishedSink = std::function<void(const RequestRecord&)>;

  NodeDriver(const NodeSpec& node, SchedulerOptions scheduler_options,
             std::unique_ptr<GangPolicy> policy, std::unique_ptr<Router> router, EventQueue& events,
             NodeDriverOptions options);
  ~NodeDriver();
  NodeDriver(const NodeDriver&) = delete;
  NodeDriver& operator=(const NodeDriver&) = delete;

  // Puts the faults' start and end events on the event list (once, before the run).
  void schedule_faults();
  // Accounts node time up to an event at `time` that is about to be handled (opens and closes
  // the measurement window).
  void before_event(Time time);
  // An iteration completion, timer wakeup or fault of this node.
  void handle(const SimEvent& event, Time now);
  // Submits an arrival (counted in this node's metrics if measured). A rejected request's record
  // is left in scheduler().effects().finished until after_event().
  SubmitResult submit(const WorkloadItem& item, Time now);
  // After each event: carries out the scheduler's effects, arms its timer, accounts GPU time.
  void after_event(Time now);
  // Ends every live request (the run is over); the window's node time is closed.
  void stop(Time now);

  // The client cancelled a request (Scheduler::cancel); after_event() carries out the effects.
  void cancel(RequestId id, Time now);
  // The engine (a GPU index, or the GPU count for the gang) whose iteration in flight holds the
  // live request, if any.
  std::optional<uint64_t> engine_in_flight(RequestId id) const;

  void set_finished_sink(FinishedSink sink) { sink_ = std::move(sink); }
  // Called after each iteration completion the scheduler handled (not for lost iterations).
  void set_iteration_sink(std::function<void(uint64_t engine, Time now)> sink) {
    iteration_sink_ = std::move(sink);
  }
  Scheduler& scheduler() { return *scheduler_; }
  const Scheduler& scheduler() const { return *scheduler_; }
  RunMetrics& metrics() { return metrics_; }
  NodeTimeAccount& node_time() { return window_.node_time(); }
  bool measured(Time arrival) const { return window_.measured(arrival); }

 private:
  void complete_iteration(uint64_t engine_index, Time now);
  void apply_fault(uint64_t index, Time now);
  void apply_effects(Time now);
  void arm_wakeup(Time now);

  const NodeSpec& node_;
  NodeDriverOptions options_;
  EventQueue& events_;
  bool oracle_output_lengths_ = false;
  std::unique_ptr<Scheduler> scheduler_;
  // The engines' own cost models (the truth in simulation), indexed by ModelId value.
  std::vector<std::unique_ptr<CostModel>> engine_cost_;
  // True output length of each live sequence, indexed by SequenceHandle.
  std::vector<int32_t> true_output_tokens_;
  // Batch in flight per engine (index gpu_count is the gang).
  std::vector<std::span<const BatchEntry>> in_flight_;
  // Per engine: bumped when a GPU loss voids its iteration in flight, whose completion event
  // (tagged with the epoch it was launched in) is then ignored.
  std::vector<uint64_t> engine_epoch_;
  std::vector<RequestId> scratch_ended_;
  std::vector<GpuActivity> activities_;
  Time armed_wakeup_ = Time::max();
  uint64_t wakeup_generation_ = 0;
  MeasurementWindow window_;
  RunMetrics metrics_;
  FinishedSink sink_;
  std::function<void(uint64_t engine, Time now)> iteration_sink_;
};

}  // namespace gangway
