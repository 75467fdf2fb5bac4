// The scheduler's invariants, one family per function, checked after every event in debug and
// test builds. Each failure names the invariant and the object that broke it.

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sched/scheduler.h"

namespace gangway {

namespace {

[[noreturn]] void violated(const std::string& what) {
  throw std::logic_error("scheduler invariant violated: " + what);
}

}  // namespace

void Scheduler::check_invariants() const {
  const std::vector<Sequence>& seqs = state_.sequences;
  std::vector<uint8_t> seen(seqs.size(), 0);
  auto visit = [&](SequenceHandle h, const char* where, SequenceState expected) {
    if (h >= seqs.size()) violated(std::string("handle out of range in ") + where);
    if (seen[h])
      violated("request " + std::to_string(seqs[h].spec.id.value()) +
               " is in two places (second: " + where + ")");
    seen[h] = 1;
    if (seqs[h].state != expected) {
      violated("request " + std::to_string(seqs[h].spec.id.value()) + " in " + where +
               " has the wrong state");
    }
  };

  // No lost request: every live sequence is in exactly one queue or running set.
  int64_t placed = 0;
  auto visit_queue = [&](const RequestQueue& queue, const char* where) {
    int64_t tokens = 0;
    std::vector<int64_t> tokens_by_class(state_.node->slo_classes.size(), 0);
    for (const auto& entry : queue) {
      const SequenceHandle h = std::get<2>(entry);
      visit(h, where, SequenceState::kQueued);
      const Sequence& seq = seqs[h];
      if (seq.kv_blocks != 0 || !seq.blocks.empty()) {
        violated(std::string("a queued request holds KV blocks in ") + where);
      }
      if (!seq.swapped && seq.kv_tokens != 0) {
        violated(std::string("a queued request has KV tokens but no KV in ") + where);
      }
      tokens += seq.queue_tokens;
      tokens_by_class[seq.spec.slo_class.value()] += seq.queue_tokens;
      ++placed;
    }
    if (tokens != queue.queued_tokens()) {
      violated(std::string("queued prefill tokens out of step in ") + where);
    }
    for (size_t c = 0; c < tokens_by_class.size(); ++c) {
      if (tokens_by_class[c] != queue.queued_tokens(SloClassId(static_cast<uint8_t>(c)))) {
        violated(std::string("queued prefill tokens of a class out of step in ") + where);
      }
    }
  };
  for (const SmallModelRuntime& model : state_.small_models)
    visit_queue(model.queue, "shared queue");
  // Block accounting of one engine's pool: the references its resident sequences hold are the
  // pool's references (no leak), every block is in one state (no pool over capacity), each
  // resident sequence has a block for every KV token, its prefill work is counted.
  // Names a pool in a message; built only when an invariant is broken.
  auto pool_name = [](const Replica* replica) {
    return replica != nullptr ? "replica on GPU " + std::to_string(replica->gpu.value())
                              : std::string("large-model");
  };
  auto check_pool = [&](const BlockPool& pool, const std::vector<SequenceHandle>& resident,
                        int64_t resident_prefill_tokens, const Replica* owner) {
    int64_t references = 0;
    int64_t prefill = 0;
    for (SequenceHandle h : resident) {
      const Sequence& seq = seqs[h];
      references += static_cast<int64_t>(seq.blocks.size());
      if (!seq.paused) prefill += seq.remaining_prefill_tokens();
      if (seq.kv_blocks != static_cast<int32_t>(seq.blocks.size())) {
        violated("request " + std::to_string(seq.spec.id.value()) + " counts " +
                 std::to_string(seq.kv_blocks) + " blocks but holds " +
                 std::to_string(seq.blocks.size()));
      }
      if (static_cast<int64_t>(seq.blocks.size()) <
          blocks_for_tokens(seq.kv_tokens, node_.kv_block_tokens)) {
        violated("request " + std::to_string(seq.spec.id.value()) +
                 " has KV tokens without blocks");
      }
      if (seq.swapped) violated("a resident request is marked swapped out");
      if (seq.published_blocks > static_cast<int32_t>(seq.blocks.size()) ||
          seq.published_blocks > static_cast<int32_t>(seq.spec.prefix_blocks.size())) {
        violated("request " + std::to_string(seq.spec.id.value()) + " published blocks it lacks");
      }
    }
    if (references != pool.references()) {
      violated(pool_name(owner) + " pool counts " + std::to_string(pool.references()) +
               " block references but its sequences hold " + std::to_string(references));
    }
    if (pool.used_blocks() < 0 || pool.cached_blocks() < 0 ||
        pool.used_blocks() + pool.available_blocks() != pool.capacity_blocks() ||
        pool.capacity_blocks() > pool.max_capacity_blocks()) {
      violated(pool_name(owner) + " pool over capacity or leaking blocks");
    }
    if (prefill != resident_prefill_tokens) {
      violated(pool_name(owner) + " resident prefill tokens out of step: counted " +
               std::to_string(resident_prefill_tokens) + ", hold " + std::to_string(prefill));
    }
  };
  std::vector<SequenceHandle> resident;
  for (const Replica& replica : state_.replicas) {
    visit_queue(replica.queue, "replica queue");
    resident.clear();
    for (SequenceHandle h : replica.running) {
      visit(h, "replica running set", SequenceState::kRunning);
      if (seqs[h].paused) violated("a paused request is in a running set");
      resident.push_back(h);
      ++placed;
    }
    for (SequenceHandle h : replica.paused) {
      visit(h, "replica paused set", SequenceState::kRunning);
      if (!seqs[h].paused || seqs[h].in_flight) violated("a paused request is not paused");
      resident.push_back(h);
      ++placed;
    }
    check_pool(replica.kv, resident, replica.resident_prefill_tokens, &replica);
  }
  if (state_.large) {
    const LargeModelRuntime& large = *state_.large;
    visit_queue(large.queue, "large queue");
    for (SequenceHandle h : large.running) {
      visit(h, "large running set", SequenceState::kRunning);
      ++placed;
    }
    check_pool(large.kv, large.running, large.resident_prefill_tokens, nullptr);
  }

  // A swapped-out request's KV is on exactly one tier: host memory holds it, the GPU none of it.
  int64_t swapped_bytes = 0;
  for (const Sequence& seq : seqs) {
    if (seq.state == SequenceState::kFinished || !seq.swapped) continue;
    if (seq.state != SequenceState::kQueued || !seq.blocks.empty() || seq.kv_tokens <= 0) {
      violated("swapped-out request " + std::to_string(seq.spec.id.value()) +
               " is not queued with its KV on the host only");
    }
    swapped_bytes += node_.model(seq.spec.model).kv_bytes_per_token_per_gpu() *
                     node_.model(seq.spec.model).tensor_parallel * seq.kv_tokens;
  }
  if (swapped_bytes != state_.host.swapped_bytes()) {
    violated("host swap space counts " + std::to_string(state_.host.swapped_bytes()) +
             " bytes but swapped requests hold " + std::to_string(swapped_bytes));
  }
  if (state_.host.used_bytes() > state_.host.capacity_bytes()) {
    violated("host KV tier over capacity");
  }
  // The pools' and the host tier's whole structure, and every block's reference count against
  // a recount from the sequences: O(pool size), so every event for test-sized pools and on a
  // sample of events (about one per 64 blocks of pool) when pools have production sizes.
  int64_t slots = state_.large ? state_.large->kv.max_capacity_blocks() : 0;
  for (const Replica& replica : state_.replicas) slots += replica.kv.max_capacity_blocks();
  const int64_t full_check_period = slots <= 16384 ? 1 : slots / 64;
  if (events_ % full_check_period == 0) {
    auto recount = [&](const BlockPool& pool, const std::vector<SequenceHandle>& holders,
                       const Replica* owner) {
      std::vector<int32_t> refs(static_cast<size_t>(pool.max_capacity_blocks()), 0);
      for (SequenceHandle h : holders) {
        for (BlockId block : seqs[h].blocks) ++refs[block];
      }
      for (size_t b = 0; b < refs.size(); ++b) {
        if (refs[b] != pool.refs_of(static_cast<BlockId>(b))) {
          violated(pool_name(owner) + " block " + std::to_string(b) + " has reference count " +
                   std::to_string(pool.refs_of(static_cast<BlockId>(b))) + " but " +
                   std::to_string(refs[b]) + " holders");
        }
      }
      try {
        pool.check();
      } catch (const std::logic_error& error) {
        violated(pool_name(owner) + ": " + error.what());
      }
    };
    for (const Replica& replica : state_.replicas) {
      resident = replica.running;
      resident.insert(resident.end(), replica.paused.begin(), replica.paused.end());
      recount(replica.kv, resident, &replica);
    }
    if (state_.large) recount(state_.large->kv, state_.large->running, nullptr);
    try {
      state_.host.check();
    } catch (const std::logic_error& error) {
      violated(error.what());
    }
  }
  if (placed != state_.live_sequences) {
    violated("live request count " + std::to_string(state_.live_sequences) + " but " +
             std::to_string(placed) + " placed");
  }
  if (static_cast<int64_t>(handle_by_id_.size()) != state_.live_sequences) {
    violated("request id index out of step with live requests");
  }

  // The per-class counters match a recount.
  {
    std::vector<std::vector<int64_t>> queued(state_.queued_by_class.size(),
                                             std::vector<int64_t>(node_.slo_classes.size(), 0));
    std::vector<std::vector<int64_t>> running = queued;
    for (const Sequence& seq : seqs) {
      if (seq.state == SequenceState::kQueued)
        ++queued[seq.spec.model.value()][seq.spec.slo_class.value()];
      if (seq.state == SequenceState::kRunning)
        ++running[seq.spec.model.value()][seq.spec.slo_class.value()];
    }
    if (queued != state_.queued_by_class || running != state_.running_by_class) {
      violated("per-class queued/running counters out of step with the requests");
    }
  }

  // Gang exclusivity: no GPU runs small and large work at once; a large iteration has the gang.
  const bool large_busy = state_.large && state_.large->busy;
  for (const GpuRuntime& gpu : state_.gpus) {
    if (gpu.small_busy && large_busy) {
      violated("GPU " + std::to_string(gpu.id.value()) + " runs small and large work at once");
    }
    if (gpu.small_busy && state_.gang.phase == GangPhase::kActive) {
      violated("GPU " + std::to_string(gpu.id.value()) + " runs small work inside a gang phase");
    }
    if (gpu.failed && gpu.small_busy) violated("a failed GPU runs an iteration");
  }
  if (large_busy && state_.gang.phase != GangPhase::kActive) {
    violated("a large-model iteration runs outside a gang phase");
  }

  // In flight: exactly the sequences of the batches in flight.
  int64_t in_flight = 0;
  for (const Sequence& seq : seqs)
    in_flight += seq.state != SequenceState::kFinished && seq.in_flight;
  int64_t batched = 0;
  for (const GpuRuntime& gpu : state_.gpus) {
    if (gpu.small_busy) batched += static_cast<int64_t>(gpu.batch.size());
  }
  if (large_busy) batched += static_cast<int64_t>(state_.large->batch.size());
  if (in_flight != batched) {
    violated(std::to_string(in_flight) + " requests marked in flight but " +
             std::to_string(batched) + " in batches in flight");
  }
}

void Scheduler::check_progress(Time now) const {
  if (!stalled(now)) return;
  int64_t large_queued = 0;
  int64_t large_resident = 0;
  if (state_.large) {
    large_queued = static_cast<int64_t>(state_.large->queue.size());
    large_resident = static_cast<int64_t>(state_.large->running.size());
  }
  violated(std::to_string(state_.live_sequences) + " live requests (large model: " +
           std::to_string(large_queued) + " queued, " + std::to_string(large_resident) +
           " resident; gang phase " + std::to_string(static_cast<int>(state_.gang.phase)) +
           ") but no iteration in flight and no wakeup asked for: nothing would run them");
}

}  // namespace gangway
