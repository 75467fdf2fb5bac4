// The scheduler core: a deterministic state machine with no clock, no threads and no I/O.
//
// A driver (the simulator, or the server's real-time loop) feeds it events, each stamped with the
// time it happened: a request arrived, an engine finished an iteration, a request was cancelled,
// a timer fired. After each event the scheduler runs one decision pass and leaves what should
// happen next in effects(): iterations to launch on GPUs or on the gang, and requests that have
// ended. The driver carries those out, clears them, and arms a timer for next_wakeup().
//
// Mechanism lives here (continuous batching with a token budget, chunked prefill, paged KV
// accounting, gang phases); policy lives behind GangPolicy (who gets the GPUs when) and Router
// (where a small-model request waits). Every request that is submitted ends in exactly one
// RequestRecord in effects().finished.
//
// Thread-safety: none; one driver thread owns a Scheduler.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/gpu_activity.h"
#include "core/node_spec.h"
#include "core/outcome.h"
#include "core/request.h"
#include "model/cost_model.h"
#include "sched/admission_gate.h"
#include "sched/batch_builder.h"
#include "sched/effects.h"
#include "sched/gang_phase_machine.h"
#include "sched/gang_policy.h"
#include "sched/kv_manager.h"
#include "sched/router.h"
#include "sched/scheduler_options.h"
#include "sched/scheduler_state.h"
#include "sched/ttft_predictor.h"

namespace gangway {

struct SubmitResult {
  bool accepted = false;
  SequenceHandle handle = kNoSequence;
};

class Scheduler : private KvEvictor, private MemoryPreemptor, private GangPhaseActions {
 public:
  // Throws InputError if the node's memory layout does not fit.
  Scheduler(const NodeSpec& node, SchedulerOptions options, std::unique_ptr<GangPolicy> policy,
            std::unique_ptr<Router> router);
  ~Scheduler() override;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // A request arrived. Rejected requests end at once (their record is in effects().finished).
  SubmitResult submit(const RequestSpec& spec, Time now);
  // The iteration in flight on `engine` finished at `now`. `ended` lists the requests of that
  // batch whose engine produced their end-of-sequence token in this iteration.
  void on_iteration_done(EngineRef engine, std::span<const RequestId> ended, Time now);
  // The client gave up. Unknown or already finished ids are ignored.
  void cancel(RequestId id, Time now);
  // A GPU failed at `now` (engine_faults.cc): the iteration in flight on it (and the gang's, if
  // it was running) is lost and must not be reported; sequences resident there fail; its
  // queued requests move to other replicas; the large model takes no requests until restored.
  void on_engine_failed(GpuId gpu, Time now);
  // The GPU is back, empty: its replicas take work again and the gang may run.
  void on_engine_restored(GpuId gpu, Time now);
  // A timer armed for next_wakeup() fired (or the driver just wants a decision pass).
  void on_timer(Time now);
  // Ends every live request with `reason` (driver shutdown). Iterations in flight are abandoned:
  // the driver must not report them afterwards.
  void stop(Time now, Reason reason);

  Effects& effects() { return effects_; }
  // The next time the scheduler wants a decision pass even if no event arrives; Time::max()
  // when it needs none.
  Time next_wakeup(Time now) const;

  const SchedulerState& state() const { return state_; }
  const AdmissionController& admission() const { return gate_.controller(); }
  const GangPolicy& policy() const { return *policy_; }
  const Router& router() const { return *router_; }
  int64_t live_requests() const { return state_.live_sequences; }
  // The KV layout in blocks; cost models used for predictions.
  const CostModel& cost_model(ModelId model) const { return *cost_models_[model.value()]; }
  // What each GPU is doing right now, for utilisation accounting. out.size() == gpu count.
  void gpu_activities(std::span<GpuActivity> out) const;

  // Throws std::logic_error naming the first broken invariant: capacity (KV pools within
  // bounds and equal to what sequences hold), no lost request (every live request in exactly
  // one place), gang exclusivity (no GPU runs small and large work at once; a large iteration
  // has every GPU). Called after every event when built with GANGWAY_CHECK_INVARIANTS.
  void check_invariants() const;
  // Throws std::logic_error if live work can never move: requests are queued or resident, yet no
  // iteration is in flight and next_wakeup(now) asks for no wakeup, so only a new arrival could
  // start anything (a deadlock a driver cannot tell from an idle node). Called after every event
  // with the invariants.
  void check_progress(Time now) const;

 private:
  SequenceHandle allocate_sequence(const RequestSpec& spec);
  void reject(const RequestSpec& spec, Reason reason, Time now);
  void finish(SequenceHandle handle, Outcome outcome, Reason reason, Time now);
  void enqueue_small(SequenceHandle handle, Time now);
  void enqueue_large(SequenceHandle handle);

  // Undoes allocate_sequence for a request that was not admitted.
  void discard_sequence(SequenceHandle handle);
  // The overload ladder began shedding: queued requests of the classes it sheds end now
  // (rejected, shed, retry elsewhere).
  void shed_queued(Time now);

  void decide(Time now);
  // One pass over the gang and every GPU: what decide() runs, and repeats for progress.
  void decide_once(Time now);
  // Live requests and no iteration in flight.
  bool idle_with_live_work() const;
  // Whether live work has nothing to run it: no iteration in flight and no wakeup asked for.
  bool stalled(Time now) const;
  // next_wakeup() without the overload ladder's wakeups: when something other than the ladder
  // stepping down is due (the policy's timers, KV copies ending).
  Time next_work_wakeup(Time now) const;
  // GangPhaseActions: the gang's next iteration, and what a phase start does to small work.
  bool launch_large(Time now, bool admit_new) override;
  void preempt_idle_small(Time now) override;
  void count_lease_pauses() override;
  void maybe_start_small(GpuRuntime& gpu, Time now);
  bool launch_small(GpuRuntime& gpu, Replica& replica, Time now,
                    std::optional<Duration> max_duration = std::nullopt);
  void complete_batch(std::vector<BatchEntry>& batch, std::span<const RequestId> ended, Time now);
  void after_event(Time now);

  // Preemption (preemption.cc). Takes a resident sequence off its engine by the cheapest mode
  // allowed (memory_needed rules out pausing); returns the mode used.
  PreemptionMode preempt(SequenceHandle handle, Time now, PreemptionReason reason,
                         bool memory_needed);
  void resume_paused(Replica& replica);
  void pause(SequenceHandle handle);
  void swap_out(SequenceHandle handle, Time now);
  void drop_for_recompute(SequenceHandle handle);
  void requeue_preempted(SequenceHandle handle);
  // Removes a resident sequence from its running (or paused) set and releases its blocks.
  void take_off_engine(Sequence& seq, SequenceHandle handle);
  // KvEvictor: the dynamic split shrinks a small pool.
  void evict_for_split(SequenceHandle handle, Time now) override;
  // MemoryPreemptor: a batch's decodes need the victim's blocks.
  void preempt_for_memory(SequenceHandle victim, Time now) override;

  // Work stealing: an idle GPU's replica takes a request queued at another replica if the
  // router finds one that starts sooner here.
  bool steal_work(Replica& replica, Time now);

  NodeSpec node_;
  SchedulerOptions options_;
  std::unique_ptr<GangPolicy> policy_;
  std::unique_ptr<Router> router_;
  std::vector<std::unique_ptr<CostModel>> cost_models_;  // indexed by ModelId value
  SchedulerState state_;
  // Prefill-time estimates for admission and preemption costs (initialised once the state is
  // built).
  TtftPredictor predictor_;
  AdmissionGate gate_;
  KvManager kv_;
  Effects effects_;
  BatchBuilder batches_;
  GangPhaseMachine gang_;
  std::vector<SequenceHandle> free_handles_;
  std::unordered_map<RequestId, SequenceHandle> handle_by_id_;
  std::vector<SequenceHandle> scratch_finished_;
  uint64_t events_ = 0;
};

}  // namespace gangway
