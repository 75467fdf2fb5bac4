#include "sched/policies/backfill_planner.h"

#include <algorithm>
#include <cmath>

#include "model/cost_model.h"

namespace gangway {

void BackfillPlanner::invalidate(GpuId gpu) {
  if (gpu.value() < stale_.size()) stale_[gpu.value()] = true;
}

Duration BackfillPlanner::step_time(const SchedulerView& state, const GpuRuntime& gpu) const {
  if (gpu.last_iteration > Duration(0)) return gpu.last_iteration;
  // Nothing has run here yet: a lone decode step of the first small model placed here.
  if (gpu.replicas.empty()) return Duration(0);
  const Replica& replica = state.replicas()[gpu.replicas.front()];
  return lone_decode_step(*state.small_models()[replica.model.value()].cost);
}

double BackfillPlanner::remaining_iterations(const SchedulerView& state, const Sequence& seq,
                                             bool conservative) const {
  const ModelSpec& model = state.node().model(seq.spec.model);
  const double prefill_iterations =
      std::ceil(static_cast<double>(seq.remaining_prefill_tokens()) / model.prefill_chunk_tokens);
  const double tokens = conservative ? state.predictor().conservative_remaining(seq)
                                     : state.predictor().expected_remaining(seq);
  // The iteration that completes the prefill also emits the first token.
  return prefill_iterations + std::max(0.0, tokens - (prefill_iterations > 0 ? 1 : 0));
}

Duration BackfillPlanner::expected_remaining(const SchedulerView& state, const Sequence& seq,
                                             const GpuRuntime& gpu) const {
  const double iterations = remaining_iterations(state, seq, false);
  return Duration(static_cast<int64_t>(iterations * step_time(state, gpu).count()));
}

void BackfillPlanner::refresh(const SchedulerView& state, Time now) {
  if (drain_.size() != state.gpus().size()) {
    drain_.assign(state.gpus().size(), now);
    stale_.assign(state.gpus().size(), true);
  }
  for (const GpuRuntime& gpu : state.gpus()) {
    const size_t g = gpu.id.value();
    if (!stale_[g] && drain_[g] >= now) continue;
    const Time base = gpu.small_busy ? std::max(now, gpu.predicted_free) : now;
    const double step_ns = static_cast<double>(step_time(state, gpu).count());
    double longest = 0;
    for (uint32_t index : gpu.replicas) {
      for (SequenceHandle h : state.replicas()[index].running) {
        longest = std::max(longest, remaining_iterations(state, state.sequence(h), conservative_));
      }
    }
    // The iteration in flight is already counted in `base`.
    if (gpu.small_busy && longest > 0) longest -= 1;
    drain_[g] = base + Duration(static_cast<int64_t>(std::max(0.0, longest) * step_ns));
    stale_[g] = false;
  }
}

Time BackfillPlanner::shadow_time(Time now) const {
  Time shadow = now;
  for (Time drain : drain_) shadow = std::max(shadow, drain);
  return shadow;
}

bool BackfillPlanner::ends_by(const SchedulerView& state, const Replica& replica,
                              const Sequence& seq, Time now, Time deadline) const {
  const GpuRuntime& gpu = state.gpus()[replica.gpu.value()];
  const Time start = gpu.small_busy ? std::max(now, gpu.predicted_free) : now;
  const double iterations = remaining_iterations(state, seq, conservative_);
  const Duration needed(
      static_cast<int64_t>(iterations * static_cast<double>(step_time(state, gpu).count())));
  return start + needed <= deadline;
}

}  // namespace gangway
