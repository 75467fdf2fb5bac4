// The scheduler's invariants, one named check per family, run after every event in debug and
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

// The named checks over one scheduler state. Each method is one family of invariants; the
// sequences each visits are marked so that the placement check sees every live request once.
class InvariantChecks {
 public:
  InvariantChecks(const SchedulerState& state, const NodeSpec& node, size_t indexed_requests,
                  uint64_t events)
      : state_(state),
        node_(node),
        seqs_(state.sequences),
        indexed_requests_(indexed_requests),
        events_(events),
        seen_(state.sequences.size(), 0) {}

  // No lost request: every live sequence is in exactly one queue or resident set, in the state
  // that place implies, and the request id index holds exactly the live ones.
  void every_request_placed_once() {
    for (const SmallModelRuntime& model : state_.small_models)
      visit_queue(model.queue, "shared queue");
    for (const Replica& replica : state_.replicas) {
      visit_queue(replica.queue, "replica queue");
      for (SequenceHandle h : replica.running) {
        visit(h, "replica running set", SequenceState::kRunning);
        if (seqs_[h].paused) violated("a paused request is in a running set");
      }
      for (SequenceHandle h : replica.paused) {
        visit(h, "replica paused set", SequenceState::kRunning);
        if (!seqs_[h].paused || seqs_[h].in_flight) violated("a paused request is not paused");
      }
    }
    if (state_.large) {
      visit_queue(state_.large->queue, "large queue");
      for (SequenceHandle h : state_.large->running) {
        visit(h, "large running set", SequenceState::kRunning);
      }
    }
    if (placed_ != state_.live_sequences) {
      violated("live request count " + std::to_string(state_.live_sequences) + " but " +
               std::to_string(placed_) + " placed");
    }
    if (static_cast<int64_t>(indexed_requests_) != state_.live_sequences) {
      violated("request id index out of step with live requests");
    }
  }

  // Block accounting of every engine's pool: the references its resident sequences hold are
  // the pool's references (no leak), every block is in one state (no pool over capacity), each
  // resident sequence has a block for every KV token, its prefill work is counted.
  void resident_kv_accounted() const {
    for (const Replica& replica : state_.replicas) {
      pool_accounted(replica.kv, resident_of(replica), replica.resident_prefill_tokens, &replica);
    }
    if (state_.large) {
      pool_accounted(state_.large->kv, state_.large->running, state_.large->resident_prefill_tokens,
                     nullptr);
    }
  }

  // A swapped-out request's KV is on exactly one tier: host memory holds it, the GPU none of
  // it; the host tier's swap space is what the swapped requests hold, within its capacity.
  void swapped_kv_on_host_only() const {
    int64_t swapped_bytes = 0;
    for (const Sequence& seq : seqs_) {
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
  }

  // The pools' and the host tier's whole structure, and every block's reference count against
  // a recount from the sequences: O(pool size), so every event for test-sized pools and on a
  // sample of events (about one per 64 blocks of pool) when pools have production sizes.
  void pool_structure_sound() const {
    int64_t slots = state_.large ? state_.large->kv.max_capacity_blocks() : 0;
    for (const Replica& replica : state_.replicas) slots += replica.kv.max_capacity_blocks();
    const int64_t full_check_period = slots <= 16384 ? 1 : slots / 64;
    if (events_ % static_cast<uint64_t>(full_check_period) != 0) return;
    for (const Replica& replica : state_.replicas) {
      references_recounted(replica.kv, resident_of(replica), &replica);
    }
    if (state_.large) references_recounted(state_.large->kv, state_.large->running, nullptr);
    try {
      state_.host.check();
    } catch (const std::logic_error& error) {
      violated(error.what());
    }
  }

  // The per-model, per-class queued and running counters match a recount.
  void class_counters_match() const {
    std::vector<std::vector<int64_t>> queued(state_.queued_by_class.size(),
                                             std::vector<int64_t>(node_.slo_classes.size(), 0));
    std::vector<std::vector<int64_t>> running = queued;
    for (const Sequence& seq : seqs_) {
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
  void gang_exclusive() const {
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
  }

  // In flight: exactly the sequences of the batches in flight.
  void in_flight_matches_batches() const {
    int64_t in_flight = 0;
    for (const Sequence& seq : seqs_) {
      in_flight += seq.state != SequenceState::kFinished && seq.in_flight;
    }
    int64_t batched = 0;
    for (const GpuRuntime& gpu : state_.gpus) {
      if (!gpu.small_busy) continue;
      batched += static_cast<int64_t>(gpu.batch.size());
      if (shape_of(gpu.batch) != gpu.batch_shape) {
        violated("GPU " + std::to_string(gpu.id.value()) +
                 ": the batch in flight is not the shape it was launched with");
      }
    }
    if (state_.large && state_.large->busy) {
      batched += static_cast<int64_t>(state_.large->batch.size());
      if (shape_of(state_.large->batch) != state_.large->batch_shape) {
        violated("the gang's batch in flight is not the shape it was launched with");
      }
    }
    if (in_flight != batched) {
      violated(std::to_string(in_flight) + " requests marked in flight but " +
               std::to_string(batched) + " in batches in flight");
    }
  }

 private:
  void visit(SequenceHandle h, const char* where, SequenceState expected) {
    if (h >= seqs_.size()) violated(std::string("handle out of range in ") + where);
    if (seen_[h]) {
      violated("request " + std::to_string(seqs_[h].spec.id.value()) +
               " is in two places (second: " + where + ")");
    }
    seen_[h] = 1;
    ++placed_;
    if (seqs_[h].state != expected) {
      violated("request " + std::to_string(seqs_[h].spec.id.value()) + " in " + where +
               " has the wrong state");
    }
  }

  void visit_queue(const RequestQueue& queue, const char* where) {
    int64_t tokens = 0;
    std::vector<int64_t> tokens_by_class(state_.node->slo_classes.size(), 0);
    for (const auto& entry : queue) {
      const SequenceHandle h = std::get<2>(entry);
      visit(h, where, SequenceState::kQueued);
      const Sequence& seq = seqs_[h];
      if (seq.kv_blocks != 0 || !seq.blocks.empty()) {
        violated(std::string("a queued request holds KV blocks in ") + where);
      }
      if (!seq.swapped && seq.kv_tokens != 0) {
        violated(std::string("a queued request has KV tokens but no KV in ") + where);
      }
      tokens += seq.queue_tokens;
      tokens_by_class[seq.spec.slo_class.value()] += seq.queue_tokens;
    }
    if (tokens != queue.queued_tokens()) {
      violated(std::string("queued prefill tokens out of step in ") + where);
    }
    for (size_t c = 0; c < tokens_by_class.size(); ++c) {
      if (tokens_by_class[c] != queue.queued_tokens(SloClassId(static_cast<uint8_t>(c)))) {
        violated(std::string("queued prefill tokens of a class out of step in ") + where);
      }
    }
  }

  static std::vector<SequenceHandle> resident_of(const Replica& replica) {
    std::vector<SequenceHandle> resident = replica.running;
    resident.insert(resident.end(), replica.paused.begin(), replica.paused.end());
    return resident;
  }

  // Names a pool in a message; built only when an invariant is broken.
  static std::string pool_name(const Replica* replica) {
    return replica != nullptr ? "replica on GPU " + std::to_string(replica->gpu.value())
                              : std::string("large-model");
  }

  void pool_accounted(const BlockPool& pool, const std::vector<SequenceHandle>& resident,
                      int64_t resident_prefill_tokens, const Replica* owner) const {
    int64_t references = 0;
    int64_t prefill = 0;
    for (SequenceHandle h : resident) {
      const Sequence& seq = seqs_[h];
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
  }

  void references_recounted(const BlockPool& pool, const std::vector<SequenceHandle>& holders,
                            const Replica* owner) const {
    std::vector<int32_t> refs(static_cast<size_t>(pool.max_capacity_blocks()), 0);
    for (SequenceHandle h : holders) {
      for (BlockId block : seqs_[h].blocks) ++refs[block];
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
  }

  const SchedulerState& state_;
  const NodeSpec& node_;
  const std::vector<Sequence>& seqs_;
  size_t indexed_requests_;
  uint64_t events_;
  std::vector<uint8_t> seen_;
  int64_t placed_ = 0;
};

}  // namespace

void Scheduler::check_invariants() const {
  InvariantChecks checks(state_, node_, handle_by_id_.size(), events_);
  checks.every_request_placed_once();
  checks.resident_kv_accounted();
  checks.swapped_kv_on_host_only();
  checks.pool_structure_sound();
  checks.class_counters_match();
  checks.gang_exclusive();
  checks.in_flight_matches_batches();
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
