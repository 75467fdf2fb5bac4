// Continuous batching, shared by small-model replicas and the large model's gang
// (sched/batch_builder.h).
//
// One iteration's batch is built under a token budget (max_batched_tokens) and a sequence cap
// (max_num_seqs): first one decode token for every resident sequence that has finished its
// prefill, then a prefill chunk (at most prefill_chunk_tokens) for resident sequences still in
// prefill, then new sequences admitted from the queues while budget, KV memory and the policy
// allow. Chunking bounds an iteration's length, which bounds how long the gang waits at its
// barrier. KV blocks are taken as tokens are computed; when decodes need blocks that are not
// free, the youngest resident sequences are preempted (swapped to host memory or dropped for
// recomputation, whichever is predicted cheaper: preemption.cc), as vLLM does.
//
// Admission reuses KV: a new sequence takes references on the longest prefix of its prompt that
// its pool's prefix cache holds, loads the blocks that follow from the host tier if they were
// kept there (the sequence waits for the PCIe copy before it computes), and computes the rest.
// Each full prompt block it computes is published to the prefix index for later requests. A
// swapped-out sequence comes back the same way: what is still cached on the GPU is shared, the
// rest is copied back from host memory. With lm_cache_aware_batching the large model's batch
// skips a queued request whose next uncached block a resident sequence is computing right now:
// one iteration later it is a hit.

#include "sched/batch_builder.h"

#include <algorithm>
#include <optional>
#include <span>
#include <stdexcept>

namespace gangway {

struct BatchBuilder::Target {
  const ModelSpec* model = nullptr;
  std::vector<SequenceHandle>* running = nullptr;
  BlockPool* kv = nullptr;
  RequestQueue* own_queue = nullptr;     // requests routed to this engine (may be null)
  RequestQueue* shared_queue = nullptr;  // the model's unbound queue (may be null)
  std::vector<BatchEntry>* batch = nullptr;
  Replica* replica = nullptr;  // null for the large model
  uint32_t replica_index = kNoReplica;
  uint32_t pool_id = 0;
  // Prefill tokens still to compute of the engine's resident sequences.
  int64_t* resident_prefill_tokens = nullptr;
  // Where a memory-blocked admission records how many blocks it lacked.
  int64_t* kv_shortfall_blocks = nullptr;
  // Defer requests whose next block a resident sequence is computing (large model).
  bool cache_aware = false;
  bool admit_new = true;
  // When set, the iteration must be predicted to end within this time (lease mode: a GPU that
  // reaches its boundary before the gang's barrier fills the wait with a shorter iteration).
  std::optional<Duration> max_duration;
  const CostModel* cost = nullptr;
  // The built batch's shape, kept up to date as entries are added so that the batch (up to
  // max_num_seqs entries) is walked once.
  BatchShape shape;
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

void BatchBuilder::record_admission_prediction(Sequence& seq, const ModelSpec& model,
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

std::optional<BatchShape> BatchBuilder::build_small(GpuRuntime& gpu, Replica& replica, Time now,
                                                    std::optional<Duration> max_duration) {
  Target target;
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
  target.pool_id = target.replica_index;
  target.resident_prefill_tokens = &replica.resident_prefill_tokens;
  target.kv_shortfall_blocks = &replica.kv_shortfall_blocks;
  if (!build(target, now)) return std::nullopt;
  return target.shape;
}

std::optional<BatchShape> BatchBuilder::build_large(Time now, bool admit_new) {
  LargeModelRuntime& large = *state_.large;
  Target target;
  target.model = &node_.model(large.model);
  target.running = &large.running;
  target.kv = &large.kv;
  target.own_queue = &large.queue;
  target.batch = &large.batch;
  target.admit_new = admit_new;
  target.cost = large.cost;
  target.pool_id = state_.large_pool_id();
  target.resident_prefill_tokens = &large.resident_prefill_tokens;
  target.kv_shortfall_blocks = &large.kv_shortfall_blocks;
  target.cache_aware = options_.lm_cache_aware_batching && options_.prefix_caching;
  if (!build(target, now)) return std::nullopt;
  return target.shape;
}

namespace {

// Whether a sequence's blocks are full, so that its next token needs a fresh one.
bool blocks_full(const Sequence& seq, int32_t block_tokens) {
  return seq.kv_tokens >= static_cast<int64_t>(seq.kv_blocks) * block_tokens;
}

// Whether a resident sequence needs a fresh block for its next decode token.
bool needs_decode_block(const Sequence& seq, int32_t block_tokens, Time now) {
  return seq.prefill_done() && seq.kv_ready <= now && blocks_full(seq, block_tokens);
}

// Requests looked at past a deferred one when the large model forms its batch cache-aware.
constexpr int kCacheAwareLookahead = 16;

}  // namespace

void BatchBuilder::preempt_for_memory(Target& target, int64_t blocks_needed, Time now) {
  const int32_t block_tokens = node_.kv_block_tokens;
  std::vector<SequenceHandle>& running = *target.running;
  while (target.kv->available_blocks() < blocks_needed && !running.empty()) {
    const SequenceHandle victim = running.back();
    const Sequence& seq = state_.sequences[victim];
    // Blocks the victim would itself have needed this iteration no longer count.
    if (needs_decode_block(seq, block_tokens, now)) --blocks_needed;
    preemptor_.preempt_for_memory(victim, now);
  }
}

bool BatchBuilder::next_block_in_progress(const Target& target, const Sequence& seq) const {
  if (seq.swapped) return false;
  const int32_t reusable = seq.reusable_prefix_blocks(node_.kv_block_tokens);
  if (reusable <= 0) return false;
  const std::span<const BlockHash> prefix(seq.spec.prefix_blocks.data(),
                                          static_cast<size_t>(reusable));
  const int32_t cached = target.kv->match(prefix);
  if (cached >= reusable) return false;
  const auto next = static_cast<size_t>(cached);
  for (SequenceHandle h : *target.running) {
    const Sequence& other = state_.sequences[h];
    // Not published yet (else it would be cached) and part of the other's prompt: it is being
    // computed, by a chunk in flight or a later one.
    if (other.spec.prefix_blocks.size() > next && other.spec.prefix_blocks[next] == prefix[next]) {
      return true;
    }
  }
  return false;
}

bool BatchBuilder::admit(Target& target, SequenceHandle handle, int32_t budget, Time now) {
  Sequence& seq = state_.sequences[handle];
  const ModelSpec& model = *target.model;
  KvAdmissionPlan plan;
  if (!kv_.plan_admission(seq, *target.kv, model, budget, *target.kv_shortfall_blocks, plan)) {
    return false;
  }
  state_.queue_holding(seq).erase(handle, seq);
  // Counted before kv_tokens changes: queued prompt tokens were counted from it.
  state_.count_transition(seq, SequenceState::kQueued, SequenceState::kRunning);
  seq.state = SequenceState::kRunning;
  seq.queued_replica = kNoReplica;
  if (target.replica) {
    seq.running_replica = target.replica_index;
    seq.gpu = target.replica->gpu;
  } else {
    ++state_.large->generation;  // its queue and resident set change
  }
  kv_.admit(seq, *target.kv, model, plan, target.pool_id, now);
  *target.resident_prefill_tokens += seq.remaining_prefill_tokens();
  if (!seq.first_scheduled) {
    seq.first_scheduled = now;
    record_admission_prediction(seq, model, static_cast<int32_t>(target.running->size()), now);
  }
  target.running->push_back(handle);
  return true;
}

bool BatchBuilder::build(Target& target, Time now) {
  const ModelSpec& model = *target.model;
  const int32_t block_tokens = node_.kv_block_tokens;
  std::vector<BatchEntry>& batch = *target.batch;
  std::vector<SequenceHandle>& running = *target.running;
  batch.clear();
  target.shape = BatchShape{};

  // Decodes first: every resident sequence past its prefill wants one token. Make room for the
  // blocks they need before taking any, by preempting the youngest if memory is short.
  // (Each needs at most one block: with that many available the count is not needed.)
  int64_t decode_blocks_needed = 0;
  if (static_cast<int64_t>(running.size()) > target.kv->available_blocks()) {
    for (SequenceHandle h : running) {
      if (needs_decode_block(state_.sequences[h], block_tokens, now)) ++decode_blocks_needed;
    }
  }
  if (decode_blocks_needed > target.kv->available_blocks()) {
    preempt_for_memory(target, decode_blocks_needed, now);
    // As vLLM does: no admissions in a pass that had to preempt, or the victim (first in its
    // queue) could come straight back and be preempted again next iteration.
    target.admit_new = false;
  }

  int32_t budget = model.max_batched_tokens;
  const auto max_seqs = static_cast<size_t>(model.max_num_seqs);
  // A decode takes one entry and one token of the budget: both limits are one count here. This
  // loop and complete_batch's run once per resident sequence per iteration (up to max_num_seqs),
  // the bulk of an iteration-done event, hence kept lean.
  const size_t decode_limit = std::min(max_seqs, static_cast<size_t>(std::max(budget, 0)));
  // A time-limited iteration holds at least one decode (below), and no iteration is shorter than
  // one decode alone (cost models never get faster as a batch grows). When not even that fits,
  // the pass only takes the decodes' next blocks, as it would have before finding out that the
  // decodes do not fit, and builds no batch.
  bool too_short = false;
  if (target.max_duration) too_short = lone_decode_step(*target.cost) > *target.max_duration;
  // Whether a resident sequence decodes this iteration: past its prefill, its KV in place, and
  // a block for its next token (taken here if its blocks are full).
  auto takes_decode = [&](Sequence& seq) {
    if (!seq.prefill_done() || seq.kv_ready > now) return false;
    if (blocks_full(seq, block_tokens)) {
      if (!target.kv->allocate(1, seq.blocks)) return false;
      ++seq.kv_blocks;
    }
    return true;
  };
  size_t decodes = 0;
  if (too_short) {
    for (SequenceHandle h : running) {
      if (decodes >= decode_limit) break;
      if (takes_decode(state_.sequences[h])) ++decodes;
    }
    return false;
  }
  int64_t decode_context_tokens = 0;
  for (SequenceHandle h : running) {
    if (decodes >= decode_limit) break;
    Sequence& seq = state_.sequences[h];
    if (!takes_decode(seq)) continue;
    ++decodes;
    batch.push_back(BatchEntry{seq.spec.id, h, 0, seq.kv_tokens, true, seq.generated_tokens + 1});
    decode_context_tokens += seq.kv_tokens;
    seq.in_flight = true;
  }
  budget -= static_cast<int32_t>(decodes);
  target.shape.decode_seqs = static_cast<int32_t>(decodes);
  target.shape.decode_context_tokens = decode_context_tokens;

  if (target.max_duration) {
    // Fit the iteration into the time left: no iteration if even its decodes do not fit, else
    // only as many prefill tokens as keep it within the limit.
    BatchShape shape = target.shape;
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
    if (seq.kv_ready > now) return false;  // its KV is still being copied in
    int32_t chunk = std::min({seq.remaining_prefill_tokens(), model.prefill_chunk_tokens, budget});
    if (chunk <= 0) return false;
    const int64_t have_tokens = seq.kv_blocks * static_cast<int64_t>(block_tokens);
    if (blocks_for_tokens(seq.kv_tokens + chunk, block_tokens) - seq.kv_blocks >
        target.kv->available_blocks()) {
      // Take what fits rather than nothing: a smaller chunk still makes progress.
      const int64_t fit_tokens =
          have_tokens + target.kv->available_blocks() * block_tokens - seq.kv_tokens;
      chunk = static_cast<int32_t>(std::min<int64_t>(chunk, fit_tokens));
      if (chunk <= 0) return false;
    }
    const int64_t blocks = blocks_for_tokens(seq.kv_tokens + chunk, block_tokens) - seq.kv_blocks;
    if (blocks > 0) target.kv->allocate(blocks, seq.blocks);
    seq.kv_blocks = static_cast<int32_t>(seq.blocks.size());
    const bool completes = seq.kv_tokens + chunk >= seq.prefill_target_tokens;
    batch.push_back(BatchEntry{seq.spec.id, h, chunk, seq.kv_tokens, completes,
                               completes ? seq.generated_tokens + 1 : seq.generated_tokens});
    target.shape.prefill_tokens += chunk;
    ++target.shape.prefill_seqs;
    target.shape.prefill_context_tokens += seq.kv_tokens;
    seq.in_flight = true;
    budget -= chunk;
    return true;
  };
  // The engine counts its resident prefill tokens: in decode-only steady state there are none
  // and the pass over the resident sequences is skipped.
  if (*target.resident_prefill_tokens > 0) {
    for (SequenceHandle h : running) {
      if (batch.size() >= max_seqs || budget < 1) break;
      Sequence& seq = state_.sequences[h];
      if (seq.prefill_done() || seq.in_flight) continue;
      add_prefill_chunk(h, seq);
    }
  }

  // Then new sequences from the queues, in queue order, while the policy agrees and the pool
  // keeps its admission watermark. Cache-aware, a request whose next block is being computed by
  // a resident sequence waits (it will hit that block) and the ones behind it may go first.
  while (target.admit_new && batch.size() < max_seqs && budget >= 1) {
    RequestQueue* queue = pick_queue(target.own_queue, target.shared_queue);
    if (!queue) break;
    SequenceHandle h = queue->front();
    if (target.cache_aware) {
      h = kNoSequence;
      int looked = 0;
      for (const auto& entry : *queue) {
        if (++looked > kCacheAwareLookahead) break;
        const SequenceHandle candidate = std::get<2>(entry);
        if (!next_block_in_progress(target, state_.sequences[candidate])) {
          h = candidate;
          break;
        }
      }
      if (h == kNoSequence) break;
    }
    Sequence& seq = state_.sequences[h];
    if (gate_.deferred(seq)) break;
    const bool allowed = target.replica ? policy_.admit_small(state_, *target.replica, seq, now)
                                        : policy_.admit_large(state_, seq, now);
    if (!allowed) break;
    if (!admit(target, h, budget, now)) break;
    if (!seq.prefill_done()) add_prefill_chunk(h, seq);
  }
#ifdef GANGWAY_CHECK_INVARIANTS
  if (shape_of(batch) != target.shape) {
    throw std::logic_error(
        "BatchBuilder::build: the shape kept while building differs from the batch's");
  }
#endif
  return !batch.empty();
}

}  // namespace gangway
