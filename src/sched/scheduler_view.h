// What gang policies, routers and the TTFT predictor may read of the scheduler's state: the node,
// the engines (GPUs, small-model replicas and their queues, the large model and the gang), the
// sequences, the load counters, the overload ladder's state, the output-length predictor and the
// host tier's kept prefix blocks. Read-only, and narrower than SchedulerState: the KV and
// preemption statistics, the dynamic split's bookkeeping, the prediction-accuracy counters and
// every mutating helper stay the scheduler's own.
//
// A view is one pointer: pass it by value or const reference. A SchedulerState converts to its
// view implicitly, so the scheduler (and a test holding a hand-built state) calls a policy with
// its state as is.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/node_spec.h"
#include "core/time.h"
#include "kv/host_kv_tier.h"
#include "sched/output_length_predictor.h"
#include "sched/scheduler_state.h"
#include "sched/sequence.h"

namespace gangway {

class SchedulerView {
 public:
  // NOLINTNEXTLINE(google-explicit-constructor): every caller holds a state and wants its view.
  SchedulerView(const SchedulerState& state) : state_(&state) {}

  const NodeSpec& node() const { return *state_->node; }
  std::span<const GpuRuntime> gpus() const { return state_->gpus; }
  std::span<const Replica> replicas() const { return state_->replicas; }
  // Indexed by ModelId value; entries for the large model are unused.
  std::span<const SmallModelRuntime> small_models() const { return state_->small_models; }
  // The large model's runtime; null on a node without one.
  const LargeModelRuntime* large() const { return state_->large ? &*state_->large : nullptr; }
  const GangRuntime& gang() const { return state_->gang; }
  const OverloadState& overload() const { return state_->overload; }
  const Sequence& sequence(SequenceHandle handle) const { return state_->sequence(handle); }
  const OutputLengthPredictor& predictor() const { return state_->predictor; }
  // Host memory's kept prefix blocks (a request's prefix may be loaded from there).
  const HostKvTier& host() const { return state_->host; }

  int64_t live_sequences() const { return state_->live_sequences; }
  // Prompt tokens still to prefill of `model`'s queued requests.
  int64_t queued_prompt_tokens(ModelId model) const {
    return state_->queued_prompt_tokens[model.value()];
  }

  bool has_large_work() const { return state_->has_large_work(); }
  bool any_small_queued() const { return state_->any_small_queued(); }
  bool any_gpu_failed() const { return state_->any_gpu_failed(); }
  bool replica_has_queued_work(const Replica& replica) const {
    return state_->replica_has_queued_work(replica);
  }
  int64_t small_resident() const { return state_->small_resident(); }
  Time gang_barrier(Time now) const { return state_->gang_barrier(now); }
  std::optional<int64_t> smallest_small_queue_key() const {
    return state_->smallest_small_queue_key();
  }
  bool has_capacity(ModelId model) const { return state_->has_capacity(model); }

 private:
  const SchedulerState* state_;
};

}  // namespace gangway
