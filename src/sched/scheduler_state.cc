#include "sched/scheduler_state.h"

namespace gangway {

std::optional<int64_t> SchedulerState::smallest_small_queue_key() const {
  std::optional<int64_t> smallest;
  auto consider = [&](const RequestQueue& queue) {
    if (!queue.empty() && (!smallest || queue.front_key() < *smallest)) {
      smallest = queue.front_key();
    }
  };
  for (const SmallModelRuntime& m : small_models) consider(m.queue);
  for (const Replica& r : replicas) consider(r.queue);
  return smallest;
}

bool SchedulerState::has_capacity(ModelId model) const {
  if (node->model(model).is_large()) return !any_gpu_failed();
  for (uint32_t index : small_models[model.value()].replicas) {
    if (!gpus[replicas[index].gpu.value()].failed) return true;
  }
  return false;
}

void SchedulerState::count_transition(const Sequence& seq, SequenceState from, SequenceState to) {
  const size_t model = seq.spec.model.value();
  const size_t slo = seq.spec.slo_class.value();
  auto adjust = [&](SequenceState state, int64_t delta) {
    if (state == SequenceState::kQueued) {
      queued_by_class[model][slo] += delta;
      queued_prompt_tokens[model] += delta * seq.remaining_prefill_tokens();
    } else if (state == SequenceState::kRunning) {
      running_by_class[model][slo] += delta;
    }
  };
  adjust(from, -1);
  adjust(to, +1);
}

}  // namespace gangway
