// Continuous batching, shared by small-model replicas and the large model's gang: builds the
// next iteration's batch of one engine under its token budget and sequence cap (decodes first,
// then prefill chunks of resident sequences, then new sequences admitted from the queues while
// budget, KV memory and the policy allow). It is the only code that moves a queued sequence to
// a running set; where decodes need blocks that are not free it asks its MemoryPreemptor (the
// Scheduler's preemption) to take the youngest resident sequences off the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/node_spec.h"
#include "core/time.h"
#include "model/cost_model.h"
#include "sched/admission_gate.h"
#include "sched/gang_policy.h"
#include "sched/kv_manager.h"
#include "sched/scheduler_options.h"
#include "sched/scheduler_state.h"

namespace gangway {

// Takes a resident sequence off its engine because its pool needs the blocks.
class MemoryPreemptor {
 public:
  virtual void preempt_for_memory(SequenceHandle victim, Time now) = 0;

 protected:
  ~MemoryPreemptor() = default;
};

class BatchBuilder {
 public:
  BatchBuilder(const NodeSpec& node, const SchedulerOptions& options, SchedulerState& state,
               KvManager& kv, const AdmissionGate& gate, GangPolicy& policy,
               const std::vector<std::unique_ptr<CostModel>>& cost_models,
               MemoryPreemptor& preemptor)
      : node_(node),
        options_(options),
        state_(state),
        kv_(kv),
        gate_(gate),
        policy_(policy),
        cost_models_(cost_models),
        preemptor_(preemptor) {}

  // Builds `replica`'s next batch into gpu.batch and returns its shape. With `max_duration`, the
  // iteration must be predicted to end within it (lease mode: a GPU that reaches its boundary
  // before the gang's barrier fills the wait with a shorter iteration). None (and an empty
  // batch) if there is nothing to run.
  std::optional<BatchShape> build_small(GpuRuntime& gpu, Replica& replica, Time now,
                                        std::optional<Duration> max_duration);
  // Builds the gang's next batch into the large model's batch; new requests join only if
  // `admit_new`.
  std::optional<BatchShape> build_large(Time now, bool admit_new);

 private:
  struct Target;
  bool build(Target& target, Time now);
  // Makes a queued sequence resident: prefix hits (GPU and host tiers) or its swapped KV, the
  // blocks of its first chunk. False (nothing changed) if the pool cannot take it now.
  bool admit(Target& target, SequenceHandle handle, int32_t budget, Time now);
  // Whether a resident sequence of the target is computing the block `seq` needs next.
  bool next_block_in_progress(const Target& target, const Sequence& seq) const;
  void preempt_for_memory(Target& target, int64_t blocks_needed, Time now);
  // The admitted sequence's predicted output length and finish time (admission's bookkeeping).
  void record_admission_prediction(Sequence& seq, const ModelSpec& model, int32_t batch_size,
                                   Time now);

  const NodeSpec& node_;
  const SchedulerOptions& options_;
  SchedulerState& state_;
  KvManager& kv_;
  const AdmissionGate& gate_;
  GangPolicy& policy_;
  const std::vector<std::unique_ptr<CostModel>>& cost_models_;
  MemoryPreemptor& preemptor_;
};

}  // namespace gangway
