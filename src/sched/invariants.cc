// The scheduler's invariants, one family per function, checked after every event in debug and
// test builds. Each failure names the invariant and the object that broke it.

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
    for (const auto& entry : queue) {
      const SequenceHandle h = std::get<2>(entry);
      visit(h, where, SequenceState::kQueued);
      if (seqs[h].kv_blocks != 0) violated(std::string("a queued request holds KV in ") + where);
      ++placed;
    }
  };
  for (const SmallModelRuntime& model : state_.small_models)
    visit_queue(model.queue, "shared queue");
  for (const Replica& replica : state_.replicas) {
    visit_queue(replica.queue, "replica queue");
    int64_t blocks = 0;
    for (SequenceHandle h : replica.running) {
      visit(h, "replica running set", SequenceState::kRunning);
      blocks += seqs[h].kv_blocks;
      ++placed;
    }
    // Capacity: the pool's count equals what its sequences hold and stays within bounds.
    if (blocks != replica.kv.used_blocks()) {
      violated("replica on GPU " + std::to_string(replica.gpu.value()) + " pool counts " +
               std::to_string(replica.kv.used_blocks()) + " used blocks but its sequences hold " +
               std::to_string(blocks));
    }
    if (replica.kv.used_blocks() > replica.kv.capacity_blocks() || replica.kv.used_blocks() < 0) {
      violated("replica KV pool over capacity on GPU " + std::to_string(replica.gpu.value()));
    }
  }
  if (state_.large) {
    const LargeModelRuntime& large = *state_.large;
    visit_queue(large.queue, "large queue");
    int64_t blocks = 0;
    for (SequenceHandle h : large.running) {
      visit(h, "large running set", SequenceState::kRunning);
      blocks += seqs[h].kv_blocks;
      ++placed;
    }
    if (blocks != large.kv.used_blocks()) violated("large-model KV pool count mismatch");
    if (large.kv.used_blocks() > large.kv.capacity_blocks()) {
      violated("large-model KV pool over capacity");
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

}  // namespace gangway
