// Continuous batching, shared by small-model replicas and the large model's gang.
//
// One iteration's batch is built under a token budget (max_batched_tokens) and a sequence cap
// (max_num_seqs): first one decode token for every resident sequence that has finished its
// prefill, then a prefill chunk (at most prefill_chunk_tokens) for resident sequences still in
// prefill, then new sequences admitted from the queues while budget, KV memory and the policy
// allow. Chunking bounds an iteration's length, which bounds how long the gang waits at its
// barrier. KV blocks are taken as tokens are computed; when decodes need blocks that are not
// free, the youngest resident sequences are preempted (their KV dropped, to be recomputed), as
// vLLM does.

#include <algorithm>
#include <optional>

#include "sched/scheduler.h"

namespace gangway {

struct Scheduler::BatchTarget {
  const ModelSpec* model = nullptr;
  std::vector<SequenceHandle>* running = nullptr;
  BlockPool* kv = nullptr;
  RequestQueue* own_queue = nullptr;     // requests routed to this engine (may be null)
  RequestQueue* shared_queue = nullptr;  // the model's unbound queue (may be null)
  std::vector<BatchEntry>* batch = nullptr;
  Replica* replica = nullptr;  // null for the large model
  uint32_t replica_index = kNoReplica;
  bool admit_new = true;
  // When set, the iteration must be predicted to end within this time (lease mode: a GPU that
  // reaches its boundary before the gang's barrier fills the wait with a shorter iteration).
  std::optional<Duration> max_duration;
  const CostModel* cost = nullptr;
};

namespace {

// The queue whose head runs next among two, by queue key (then insertion order).
RequestQueue* pick_queue(RequestQueue* a, RequestQueue* b) {
  const bool a_ready = a && !a->empty();
  const bool b_ready = b && !b->empty();
  if (a_ready && b_ready) {
    return *a->begin() <= *b->begin() ? a : b;
  }
  if (a_ready) return a;
  if (b_ready) return b;
  return nullptr;
}

}  // namespace

void Scheduler::record_admission_prediction(Sequence& seq, const ModelSpec& model,
                                            int32_t batch_size, Time now) {
  // Remaining time as the prefill's chunks plus one iteration per further token, each as long as
  // an iteration of the batch the engine runs now (a rough but cheap stand-in).
  const double remaining = state_.predictor.expected_remaining(seq);
  seq.predicted_output_tokens = seq.generated_tokens + remaining;
  const CostModel& cost = *cost_models_[model.id.value()];
  const Duration prefill = prefill_time(cost, model, seq.remaining_prefill_tokens(), seq.kv_tokens);
  BatchShape decode;
  decode.decode_seqs = std::max<int32_t>(1, batch_size);
  decode.decode_context_tokens =
      static_cast<int64_t>(decode.decode_seqs) * (seq.spec.prompt_tokens + 64);
  const Duration step = cost.iteration_time(decode);
  seq.predicted_finish =
      now + prefill + Duration(static_cast<int64_t>(std::max(0.0, remaining - 1) * step.count()));
}

bool Scheduler::launch_small(GpuRuntime& gpu, Replica& replica, Time now,
                             std::optional<Duration> max_duration) {
  BatchTarget target;
  target.max_duration = max_duration;
  target.cost = cost_models_[replica.model.value()].get();
  target.model = &node_.model(replica.model);
  target.running = &replica.running;
  target.kv = &replica.kv;
  target.own_queue = &replica.queue;
  target.shared_queue = &state_.small_models[replica.model.value()].queue;
  target.batch = &gpu.batch;
  target.replica = &replica;
  target.replica_index = static_cast<uint32_t>(&replica - state_.replicas.data());
  if (!build_batch(target, now)) return false;

  BatchShape shape;
  for (const BatchEntry& entry : gpu.batch) {
    if (entry.prefill_tokens > 0) {
      shape.prefill_tokens += entry.prefill_tokens;
      ++shape.prefill_seqs;
      shape.prefill_context_tokens += entry.context_tokens;
    } else {
      ++shape.decode_seqs;
      shape.decode_context_tokens += entry.context_tokens;
    }
  }
  const Duration predicted = cost_models_[replica.model.value()]->iteration_time(shape);
  gpu.small_busy = true;
  gpu.busy_since = now;
  gpu.predicted_free = now + predicted;
  gpu.last_iteration = predicted;
  gpu.batch_replica = target.replica_index;
  effects_.launches.push_back(
      IterationLaunch{EngineRef::small(gpu.id), replica.model, gpu.batch, shape, predicted, now});
  return true;
}

bool Scheduler::launch_large(Time now, bool admit_new) {
  LargeModelRuntime& large = *state_.large;
  BatchTarget target;
  target.model = &node_.model(large.model);
  target.running = &large.running;
  target.kv = &large.kv;
  target.own_queue = &large.queue;
  target.batch = &large.batch;
  target.admit_new = admit_new;
  if (!build_batch(target, now)) return false;

  BatchShape shape;
  for (const BatchEntry& entry : large.batch) {
    if (entry.prefill_tokens > 0) {
      shape.prefill_tokens += entry.prefill_tokens;
      ++shape.prefill_seqs;
      shape.prefill_context_tokens += entry.context_tokens;
    } else {
      ++shape.decode_seqs;
      shape.decode_context_tokens += entry.context_tokens;
    }
  }
  const Duration predicted = large.cost->iteration_time(shape);
  large.busy = true;
  large.busy_since = now;
  large.predicted_free = now + predicted;
  large.last_iteration = predicted;
  effects_.launches.push_back(
      IterationLaunch{EngineRef::large(), large.model, large.batch, shape, predicted, now});
  return true;
}

void Scheduler::preempt_for_memory(BatchTarget& target, int64_t blocks_needed, Time now) {
  const int32_t block_tokens = node_.kv_block_tokens;
  std::vector<SequenceHandle>& running = *target.running;
  while (target.kv->free_blocks() < blocks_needed && !running.empty()) {
    const SequenceHandle victim = running.back();
    const Sequence& seq = state_.sequences[victim];
    // Blocks the victim would itself have needed this iteration no longer count.
    if (seq.prefill_done() && seq.kv_tokens % block_tokens == 0) --blocks_needed;
    preempt(victim, now);
  }
}

bool Scheduler::build_batch(BatchTarget& target, Time now) {
  const ModelSpec& model = *target.model;
  const int32_t block_tokens = node_.kv_block_tokens;
  std::vector<BatchEntry>& batch = *target.batch;
  std::vector<SequenceHandle>& running = *target.running;
  batch.clear();

  // Decodes first: every resident sequence past its prefill wants one token. Make room for the
  // blocks they need before taking any, by preempting the youngest if memory is short.
  int64_t decode_blocks_needed = 0;
  for (SequenceHandle h : running) {
    const Sequence& seq = state_.sequences[h];
    if (seq.prefill_done() && seq.kv_tokens % block_tokens == 0) ++decode_blocks_needed;
  }
  if (decode_blocks_needed > target.kv->free_blocks()) {
    preempt_for_memory(target, decode_blocks_needed, now);
  }

  int32_t budget = model.max_batched_tokens;
  const auto max_seqs = static_cast<size_t>(model.max_num_seqs);
  for (SequenceHandle h : running) {
    if (batch.size() >= max_seqs || budget < 1) break;
    Sequence& seq = state_.sequences[h];
    if (!seq.prefill_done()) continue;
    if (seq.kv_tokens % block_tokens == 0) {
      if (!target.kv->allocate(1)) continue;
      ++seq.kv_blocks;
    }
    batch.push_back(BatchEntry{seq.spec.id, h, 0, seq.kv_tokens, true, seq.generated_tokens + 1});
    seq.in_flight = true;
    --budget;
  }

  if (target.max_duration) {
    // Fit the iteration into the time left: no iteration if even its decodes do not fit, else
    // only as many prefill tokens as keep it within the limit.
    BatchShape shape;
    for (const BatchEntry& entry : batch) {
      ++shape.decode_seqs;
      shape.decode_context_tokens += entry.context_tokens;
    }
    if (batch.empty() || target.cost->iteration_time(shape) > *target.max_duration) {
      if (!batch.empty()) {
        for (const BatchEntry& entry : batch) state_.sequences[entry.handle].in_flight = false;
        batch.clear();
      }
      return false;
    }
    int32_t low = 0;
    int32_t high = budget;
    shape.prefill_seqs = 1;
    while (low < high) {
      const int32_t middle = (low + high + 1) / 2;
      shape.prefill_tokens = middle;
      if (target.cost->iteration_time(shape) <= *target.max_duration) {
        low = middle;
      } else {
        high = middle - 1;
      }
    }
    budget = low;
  }

  // Then chunks of prompts already resident and part-way through prefill.
  auto add_prefill_chunk = [&](SequenceHandle h, Sequence& seq) -> bool {
    int32_t chunk = std::min({seq.remaining_prefill_tokens(), model.prefill_chunk_tokens, budget});
    if (chunk <= 0) return false;
    const int64_t have_tokens = seq.kv_blocks * static_cast<int64_t>(block_tokens);
    const int64_t need_blocks =
        blocks_for_tokens(seq.kv_tokens + chunk, block_tokens) - seq.kv_blocks;
    if (need_blocks > target.kv->free_blocks()) {
      // Take what fits rather than nothing: a smaller chunk still makes progress.
      const int64_t fit_tokens =
          have_tokens + target.kv->free_blocks() * block_tokens - seq.kv_tokens;
      chunk = static_cast<int32_t>(std::min<int64_t>(chunk, fit_tokens));
      if (chunk <= 0) return false;
    }
    const int64_t blocks = blocks_for_tokens(seq.kv_tokens + chunk, block_tokens) - seq.kv_blocks;
    target.kv->allocate(blocks);
    seq.kv_blocks += static_cast<int32_t>(blocks);
    const bool completes = seq.kv_tokens + chunk >= seq.prefill_target_tokens;
    batch.push_back(BatchEntry{seq.spec.id, h, chunk, seq.kv_tokens, completes,
                               completes ? seq.generated_tokens + 1 : seq.generated_tokens});
    seq.in_flight = true;
    budget -= chunk;
    return true;
  };
  for (SequenceHandle h : running) {
    if (batch.size() >= max_seqs || budget < 1) break;
    Sequence& seq = state_.sequences[h];
    if (seq.prefill_done() || seq.in_flight) continue;
    add_prefill_chunk(h, seq);
  }

  // Then new sequences from the queues, in queue order, while the policy agrees and the pool
  // keeps its admission watermark.
  const auto watermark_blocks =
      static_cast<int64_t>(options_.kv_admission_watermark * target.kv->capacity_blocks());
  while (target.admit_new && batch.size() < max_seqs && budget >= 1) {
    RequestQueue* queue = pick_queue(target.own_queue, target.shared_queue);
    if (!queue) break;
    const SequenceHandle h = queue->front();
    Sequence& seq = state_.sequences[h];
    const bool allowed = target.replica ? policy_->admit_small(state_, *target.replica, seq, now)
                                        : policy_->admit_large(state_, seq, now);
    if (!allowed) break;
    const int32_t first_chunk =
        std::min({seq.remaining_prefill_tokens(), model.prefill_chunk_tokens, budget});
    if (blocks_for_tokens(seq.kv_tokens + first_chunk, block_tokens) + watermark_blocks >
        target.kv->free_blocks()) {
      break;
    }
    queue->erase(h, seq);
    count_transition(seq, SequenceState::kQueued, SequenceState::kRunning);
    seq.state = SequenceState::kRunning;
    seq.queued_replica = kNoReplica;
    if (target.replica) {
      seq.running_replica = target.replica_index;
      seq.gpu = target.replica->gpu;
    }
    if (!seq.first_scheduled) {
      seq.first_scheduled = now;
      record_admission_prediction(seq, model, static_cast<int32_t>(running.size()), now);
    }
    running.push_back(h);
    add_prefill_chunk(h, seq);
  }
  return !batch.empty();
}

}  // namespace gangway
