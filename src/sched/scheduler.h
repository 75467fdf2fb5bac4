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

#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/gpu_activity.h"
#include "core/node_spec.h"
#include "core/outcome.h"
#include "core/request.h"
#include "model/cost_model.h"
#include "sched/effects.h"
#include "sched/gang_policy.h"
#include "sched/router.h"
#include "sched/scheduler_state.h"

namespace gangway {

struct SchedulerOptions {
  // Share of each GPU's KV memory reserved for the large model's shard (static split).
  double large_kv_fraction = 0.5;
  // Fraction of a KV pool kept free when admitting a new sequence, so that running sequences can
  // grow a while before anyone must be preempted (vLLM's watermark).
  double kv_admission_watermark = 0.01;
  // Output length assumed before any request of a model has completed.
  double prior_mean_output_tokens = 128;
  // Predict from RequestSpec::oracle_output_tokens (experiments' perfect-knowledge reference).
  bool oracle_predictor = false;
};

struct SubmitResult {
  bool accepted = false;
  SequenceHandle handle = kNoSequence;
};

class Scheduler {
 public:
  // Throws InputError if the node's memory layout does not fit.
  Scheduler(const NodeSpec& node, SchedulerOptions options, std::unique_ptr<GangPolicy> policy,
            std::unique_ptr<Router> router);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // A request arrived. Rejected requests end at once (their record is in effects().finished).
  SubmitResult submit(const RequestSpec& spec, Time now);
  // The iteration in flight on `engine` finished at `now`. `ended` lists the requests of that
  // batch whose engine produced their end-of-sequence token in this iteration.
  void on_iteration_done(EngineRef engine, std::span<const RequestId> ended, Time now);
  // The client gave up. Unknown or already finished ids are ignored.
  void cancel(RequestId id, Time now);
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

 private:
  SequenceHandle allocate_sequence(const RequestSpec& spec);
  void reject(const RequestSpec& spec, Reason reason, Time now);
  void finish(SequenceHandle handle, Outcome outcome, Reason reason, Time now);
  void enqueue_small(SequenceHandle handle, Time now);
  void enqueue_large(SequenceHandle handle);
  void release_kv(Sequence& seq, BlockPool& pool);
  BlockPool& pool_of(const Sequence& seq);
  // The most KV blocks any one engine of this model has: a longer request can never run.
  int64_t largest_pool_blocks(const ModelSpec& model) const;

  void decide(Time now);
  void advance_gang(Time now);
  void release_gang(Time now);
  bool launch_large(Time now, bool admit_new);
  void maybe_start_small(GpuRuntime& gpu, Time now);
  bool launch_small(GpuRuntime& gpu, Replica& replica, Time now,
                    std::optional<Duration> max_duration = std::nullopt);
  void complete_batch(std::vector<BatchEntry>& batch, std::span<const RequestId> ended, Time now);
  void after_event();

  // Continuous batching shared by both tiers; see batch_builder.cc.
  struct BatchTarget;
  bool build_batch(BatchTarget& target, Time now);
  void preempt_for_memory(BatchTarget& target, int64_t blocks_needed, Time now);
  // Drops a resident sequence's KV and queues it again for recomputation (preemption.cc).
  void preempt(SequenceHandle handle, Time now);
  void preempt_resident_small(GpuRuntime& gpu, Time now);
  // Keeps SchedulerState's per-class counters in step with a sequence's state changes.
  void count_transition(const Sequence& seq, SequenceState from, SequenceState to);
  void record_admission_prediction(Sequence& seq, const ModelSpec& model, int32_t batch_size,
                                   Time now);

  NodeSpec node_;
  SchedulerOptions options_;
  std::unique_ptr<GangPolicy> policy_;
  std::unique_ptr<Router> router_;
  std::vector<std::unique_ptr<CostModel>> cost_models_;  // indexed by ModelId value
  SchedulerState state_;
  std::vector<SequenceHandle> free_handles_;
  std::unordered_map<RequestId, SequenceHandle> handle_by_id_;
  Effects effects_;
  std::vector<SequenceHandle> scratch_finished_;
};

}  // namespace gangway
