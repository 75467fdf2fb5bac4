#include "sched/ttft_predictor.h"

#include <algorithm>

namespace gangway {

void TtftPredictor::initialise(const SchedulerView& state) {
  seconds_per_prefill_token_.assign(state.node().models.size(), 0.0);
  for (const ModelSpec& model : state.node().models) {
    const CostModel* cost = state.small_models()[model.id.value()].cost;
    if (cost == nullptr) continue;
    seconds_per_prefill_token_[model.id.value()] =
        lone_chunk_prefill_seconds_per_token(*cost, model);
  }
}

void TtftPredictor::cached_blocks(const SchedulerView& state, const Replica& replica,
                                  const Sequence& seq, int32_t& gpu_blocks, int32_t& host_blocks) {
  gpu_blocks = 0;
  host_blocks = 0;
  if (!replica.kv.prefix_caching()) return;
  const int32_t reusable = seq.reusable_prefix_blocks(state.node().kv_block_tokens);
  if (reusable <= 0) return;
  const std::span<const BlockHash> prefix(seq.spec.prefix_blocks.data(),
                                          static_cast<size_t>(reusable));
  gpu_blocks = replica.kv.match(prefix);
  if (state.host().keeps_prefixes() && gpu_blocks < reusable) {
    host_blocks =
        state.host().match(replica.kv.host_key(), prefix, gpu_blocks, reusable - gpu_blocks);
  }
}

int32_t TtftPredictor::cached_tokens(const SchedulerView& state, const Replica& replica,
                                     const Sequence& seq) {
  // A sequence with computed KV (one preempted and requeued) keeps what it has; its prefix
  // match is then already part of it.
  if (seq.kv_tokens > 0) return 0;
  int32_t gpu_blocks = 0;
  int32_t host_blocks = 0;
  cached_blocks(state, replica, seq, gpu_blocks, host_blocks);
  return (gpu_blocks + host_blocks) * state.node().kv_block_tokens;
}

TtftEstimate TtftPredictor::own_part(const SchedulerView& state, const Replica& replica,
                                     const Sequence& seq) const {
  int32_t gpu_blocks = 0;
  int32_t host_blocks = 0;
  cached_blocks(state, replica, seq, gpu_blocks, host_blocks);
  return own_part(state, replica.model, seq, gpu_blocks, host_blocks);
}

TtftEstimate TtftPredictor::own_part(const SchedulerView& state, ModelId model_id,
                                     const Sequence& seq, int32_t gpu_blocks,
                                     int32_t host_blocks) const {
  TtftEstimate estimate;
  const int32_t block_tokens = state.node().kv_block_tokens;
  estimate.gpu_cached_tokens = gpu_blocks * block_tokens;
  estimate.host_cached_tokens = host_blocks * block_tokens;
  const ModelSpec& model = state.node().model(model_id);
  estimate.load = kv_swap_time(model, state.node().hardware, estimate.host_cached_tokens);
  const int32_t cached = estimate.cached_tokens();
  estimate.prefill = prefill_time(state, model_id, seq.prefill_target_tokens - cached, cached);
  return estimate;
}

TtftEstimate TtftPredictor::estimate(const SchedulerView& state, const Replica& replica,
                                     const Sequence& seq, Time now) const {
  TtftEstimate estimate = own_part(state, replica, seq);
  estimate.wait =
      wait(state, replica, replica.queue.queued_tokens() + replica.resident_prefill_tokens, now);
  return estimate;
}

Duration TtftPredictor::wait(const SchedulerView& state, const Replica& replica,
                             int64_t prefill_tokens_ahead, Time now) const {
  const GpuRuntime& gpu = state.gpus()[replica.gpu.value()];
  Duration wait = in_flight_rest(gpu, now);
  wait += blackout(state, now);
  if (prefill_tokens_ahead > 0) {
    // Resident sequences decode one token each per iteration; prefill gets the rest of the
    // token budget, so the work ahead drains at that share of the prefill rate.
    const ModelSpec& model = state.node().model(replica.model);
    const double budget = model.max_batched_tokens;
    const double decodes = static_cast<double>(replica.running.size());
    const double prefill_share = std::max(budget - decodes, budget / 8) / budget;
    wait += seconds_to_duration(static_cast<double>(prefill_tokens_ahead) *
                                seconds_per_prefill_token_[replica.model.value()] / prefill_share);
  }
  return wait;
}

Duration TtftPredictor::prefill_time(const SchedulerView& state, ModelId model_id,
                                     int32_t new_tokens, int32_t cached_tokens) const {
  if (new_tokens <= 0) return Duration(0);
  const CostModel& cost = *state.small_models()[model_id.value()].cost;
  const int32_t chunk = state.node().model(model_id).prefill_chunk_tokens;
  PrefillTimeMemo& memo = last_prefill_;
  if (memo.cost != &cost || memo.chunk_tokens != chunk || memo.new_tokens != new_tokens ||
      memo.cached_tokens != cached_tokens) {
    memo = PrefillTimeMemo{&cost, chunk, new_tokens, cached_tokens,
                           compute_prefill_time(cost, chunk, new_tokens, cached_tokens)};
  }
  return memo.time;
}

Duration TtftPredictor::compute_prefill_time(const CostModel& cost, int32_t chunk,
                                             int32_t new_tokens, int32_t cached_tokens) {
  const int32_t full_chunks = new_tokens / chunk;
  const int32_t remainder = new_tokens % chunk;
  auto chunk_time = [&](int32_t tokens, int64_t context) {
    BatchShape shape;
    shape.prefill_tokens = tokens;
    shape.prefill_seqs = 1;
    shape.prefill_context_tokens = context;
    return cost.iteration_time(shape);
  };
  Duration total{0};
  if (full_chunks + (remainder > 0) <= 4) {
    int64_t context = cached_tokens;
    for (int32_t i = 0; i < full_chunks; ++i) {
      total += chunk_time(chunk, context);
      context += chunk;
    }
    if (remainder > 0) total += chunk_time(remainder, context);
    return total;
  }
  const int64_t mean_context = cached_tokens + static_cast<int64_t>(full_chunks - 1) * chunk / 2;
  total = chunk_time(chunk, mean_context) * full_chunks;
  if (remainder > 0) {
    total += chunk_time(remainder, cached_tokens + static_cast<int64_t>(full_chunks) * chunk);
  }
  return total;
}

Duration TtftPredictor::blackout(const SchedulerView& state, Time now) const {
  const GangRuntime& gang = state.gang();
  if (gang.phase == GangPhase::kOff || !state.large()) return Duration(0);
  if (gang.phase == GangPhase::kActive) {
    Duration rest{0};
    if (state.large()->busy && state.large()->predicted_free > now) {
      rest = state.large()->predicted_free - now;
    }
    const Time typical_end = gang.active_since + gang.typical_phase;
    if (typical_end > now) rest = std::max(rest, typical_end - now);
    return rest;
  }
  return (state.gang_barrier(now) - now) + gang.typical_phase;
}

}  // namespace gangway
