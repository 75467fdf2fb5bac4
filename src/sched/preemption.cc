// Taking resident sequences off their engine, chosen by cost (docs/kv-and-routing.md,
// "Preemption by cost"), and the dynamic KV split that can require it.
//
// A sequence that must yield (its pool ran out of blocks for decodes; the gang takes the GPUs;
// the dynamic split gives its memory to the other tier) can
//   pause in place  keep its KV in HBM and simply not be scheduled: free, but only when nobody
//                   needs that memory;
//   swap to host    copy its KV to host memory now and back before it resumes: 2 x KV bytes over
//                   PCIe (kv_swap_time), only while host memory has room;
//   recompute       drop its KV and prefill prompt + generated tokens again later: the prefill
//                   time of what is not still cached (its published prompt blocks stay in the
//                   prefix cache, so a long shared prompt makes recomputing cheap), paid in GPU
//                   time by its engine too.
// The cheapest feasible one by predicted delay to the victim plus GPU-seconds of the node wins
// (ties: pause, swap, recompute); every choice is counted in KvStatistics with its predicted
// costs. A swapped or dropped sequence goes back to the front of its queue (its queue key is
// unchanged, so it stays ahead of younger requests).

#include <algorithm>

#include "sched/scheduler.h"
#include "sched/ttft_predictor.h"

namespace gangway {

const char* to_string(PreemptionMode mode) {
  switch (mode) {
    case PreemptionMode::kPause:
      return "pause";
    case PreemptionMode::kSwap:
      return "swap";
    case PreemptionMode::kRecompute:
      return "recompute";
  }
  return "unknown";
}

const char* to_string(PreemptionReason reason) {
  switch (reason) {
    case PreemptionReason::kMemory:
      return "memory";
    case PreemptionReason::kGang:
      return "gang";
    case PreemptionReason::kSplit:
      return "split";
    case PreemptionReason::kPriority:
      return "priority";
  }
  return "unknown";
}

void Scheduler::take_off_engine(Sequence& seq, SequenceHandle handle) {
  std::vector<SequenceHandle>* list = nullptr;
  int64_t* resident_prefill = nullptr;
  if (seq.large) {
    list = &state_.large->running;
    resident_prefill = &state_.large->resident_prefill_tokens;
    ++state_.large->generation;
  } else {
    Replica& replica = state_.replicas[seq.running_replica];
    list = seq.paused ? &replica.paused : &replica.running;
    resident_prefill = &replica.resident_prefill_tokens;
  }
  list->erase(std::find(list->begin(), list->end(), handle));
  if (!seq.paused) *resident_prefill -= seq.remaining_prefill_tokens();
  seq.paused = false;
  kv_.release(seq);
}

void Scheduler::pause(SequenceHandle handle) {
  Sequence& seq = state_.sequences[handle];
  Replica& replica = state_.replicas[seq.running_replica];
  replica.running.erase(std::find(replica.running.begin(), replica.running.end(), handle));
  replica.resident_prefill_tokens -= seq.remaining_prefill_tokens();
  replica.paused.push_back(handle);
  seq.paused = true;
}

void Scheduler::resume_paused(Replica& replica) {
  if (replica.paused.empty()) return;
  // Paused sequences are older than anything admitted since: they go back in front, in order.
  for (SequenceHandle h : replica.paused) {
    Sequence& seq = state_.sequences[h];
    seq.paused = false;
    replica.resident_prefill_tokens += seq.remaining_prefill_tokens();
  }
  replica.running.insert(replica.running.begin(), replica.paused.begin(), replica.paused.end());
  replica.paused.clear();
}

// A sequence taken off its engine goes back to the queue it came from: the large model's, or
// its replica's own (its prefix and any swapped KV are there).
void Scheduler::requeue_preempted(SequenceHandle handle) {
  Sequence& seq = state_.sequences[handle];
  seq.state = SequenceState::kQueued;
  state_.count_transition(seq, SequenceState::kFinished, SequenceState::kQueued);
  if (seq.large) {
    state_.large->queue.push(handle, seq, seq.queue_key);
    ++state_.large->generation;
  } else {
    const uint32_t replica = seq.running_replica;
    seq.running_replica = kNoReplica;
    seq.queued_replica = replica;
    Replica& home = state_.replicas[replica];
    home.queue.push(handle, seq, seq.queue_key, TtftPredictor::cached_tokens(state_, home, seq));
  }
}

void Scheduler::drop_for_recompute(SequenceHandle handle) {
  Sequence& seq = state_.sequences[handle];
  take_off_engine(seq, handle);
  state_.count_transition(seq, SequenceState::kRunning, SequenceState::kFinished);
  seq.prefill_target_tokens = seq.spec.prompt_tokens + seq.generated_tokens;
  seq.kv_tokens = 0;
  seq.kv_ready = Time::zero();
  requeue_preempted(handle);
}

void Scheduler::swap_out(SequenceHandle handle, Time now) {
  Sequence& seq = state_.sequences[handle];
  kv_.swap_out(seq, node_.model(seq.spec.model), now);
  take_off_engine(seq, handle);
  state_.count_transition(seq, SequenceState::kRunning, SequenceState::kFinished);
  requeue_preempted(handle);
}

PreemptionMode Scheduler::preempt(SequenceHandle handle, Time now, PreemptionReason reason,
                                  bool memory_needed) {
  Sequence& seq = state_.sequences[handle];
  const ModelSpec& model = node_.model(seq.spec.model);
  const int32_t block_tokens = node_.kv_block_tokens;

  struct Option {
    bool feasible = false;
    double victim_delay_s = 0;
    double node_gpu_s = 0;
    double total() const { return victim_delay_s + node_gpu_s; }
  };
  std::array<Option, kPreemptionModes> options;
  Option& pause_option = options[static_cast<int>(PreemptionMode::kPause)];
  Option& swap_option = options[static_cast<int>(PreemptionMode::kSwap)];
  Option& recompute_option = options[static_cast<int>(PreemptionMode::kRecompute)];
  // Pausing keeps the memory: only when it is not what is needed (large sequences pause
  // between leases by themselves and are never taken off for the gang).
  pause_option.feasible = !memory_needed && !seq.large;
  swap_option.feasible = seq.kv_tokens > 0 && kv_.swap_fits(model, seq.kv_tokens);
  swap_option.victim_delay_s = 2 * to_seconds(kv_swap_time(model, node_.hardware, seq.kv_tokens));
  // Its published prompt blocks stay cached when dropped: only the rest is computed again. When
  // the memory itself is needed, those nobody else holds are the next blocks evicted: then they
  // come back from the host tier (a load) if it keeps evicted prefixes, else they are computed
  // again too. Blocks another sequence shares stay on the GPU either way.
  int32_t still_cached =
      std::min(seq.published_blocks * block_tokens, std::max(0, seq.kv_tokens - 1));
  double reload_s = 0;
  if (memory_needed) {
    const BlockPool& pool = kv_.pool_of(seq);
    int32_t shared_blocks = 0;
    while (shared_blocks < seq.published_blocks &&
           pool.refs_of(seq.blocks[static_cast<size_t>(shared_blocks)]) > 1) {
      ++shared_blocks;
    }
    const int32_t shared = std::min(shared_blocks * block_tokens, still_cached);
    if (kv_.host_keeps_prefixes()) {
      reload_s = to_seconds(kv_swap_time(model, node_.hardware, still_cached - shared));
    } else {
      still_cached = shared;
    }
  }
  const double prefill_s = to_seconds(
      predictor_.prefill_time(state_, seq.spec.model, seq.kv_tokens - still_cached, still_cached));
  recompute_option.feasible = true;
  recompute_option.victim_delay_s = prefill_s + reload_s;
  recompute_option.node_gpu_s = prefill_s * (seq.large ? node_.gpu_count : 1);

  PreemptionMode mode = PreemptionMode::kRecompute;
  if (options_.preemption == PreemptionPolicy::kCost) {
    double best = recompute_option.total();
    for (PreemptionMode candidate : {PreemptionMode::kSwap, PreemptionMode::kPause}) {
      const Option& option = options[static_cast<int>(candidate)];
      if (option.feasible && option.total() <= best) {
        best = option.total();
        mode = candidate;
      }
    }
  } else {
    // Forced for an experiment; where impossible, the next mode that works.
    const auto forced = static_cast<int>(options_.preemption) - 1;  // kPause is 1
    for (int m = forced; m < kPreemptionModes; ++m) {
      if (options[m].feasible) {
        mode = static_cast<PreemptionMode>(m);
        break;
      }
    }
  }

  const Option& chosen = options[static_cast<int>(mode)];
  PreemptionCounters& counters =
      state_.kv_stats.preemptions_by_model[seq.spec.model.value()][static_cast<int>(mode)];
  ++counters.count;
  counters.kv_tokens += seq.kv_tokens;
  counters.victim_delay_s += chosen.victim_delay_s;
  counters.node_gpu_s += chosen.node_gpu_s;
  ++state_.kv_stats.preemptions_by_reason[static_cast<int>(reason)][static_cast<int>(mode)];
  ++seq.preemptions;
  switch (mode) {
    case PreemptionMode::kPause:
      pause(handle);
      break;
    case PreemptionMode::kSwap:
      swap_out(handle, now);
      break;
    case PreemptionMode::kRecompute:
      drop_for_recompute(handle);
      break;
  }
  return mode;
}

void Scheduler::preempt_idle_small(Time now) {
  for (GpuRuntime& gpu : state_.gpus) {
    if (gpu.small_busy) continue;
    for (uint32_t index : gpu.replicas) {
      Replica& replica = state_.replicas[index];
      while (!replica.running.empty()) {
        preempt(replica.running.back(), now, PreemptionReason::kGang, /*memory_needed=*/false);
      }
    }
  }
}

void Scheduler::count_lease_pauses() {
  // The small sequences still resident when a lease starts pause in place (their KV stays;
  // nobody needs it: the large model has its own pool).
  for (const Replica& replica : state_.replicas) {
    if (replica.running.empty()) continue;
    const auto count = static_cast<int64_t>(replica.running.size());
    PreemptionCounters& counters =
        state_.kv_stats
            .preemptions_by_model[replica.model.value()][static_cast<int>(PreemptionMode::kPause)];
    counters.count += count;
    for (SequenceHandle h : replica.running) counters.kv_tokens += state_.sequences[h].kv_tokens;
    state_.kv_stats.preemptions_by_reason[static_cast<int>(PreemptionReason::kGang)]
                                         [static_cast<int>(PreemptionMode::kPause)] += count;
  }
}

void Scheduler::preempt_for_memory(SequenceHandle victim, Time now) {
  preempt(victim, now, PreemptionReason::kMemory, /*memory_needed=*/true);
}

void Scheduler::evict_for_split(SequenceHandle handle, Time now) {
  preempt(handle, now, PreemptionReason::kSplit, /*memory_needed=*/true);
}

// ---------------------------------------------------------------------------------------------
// Work stealing.

bool Scheduler::steal_work(Replica& replica, Time now) {
  const auto index = static_cast<uint32_t>(&replica - state_.replicas.data());
  const std::optional<SequenceHandle> stolen = router_->steal(state_, index, now);
  if (!stolen) return false;
  Sequence& seq = state_.sequences[*stolen];
  if (seq.state != SequenceState::kQueued || seq.queued_replica == kNoReplica ||
      seq.queued_replica == index || seq.spec.model != replica.model || seq.swapped) {
    return false;  // a router may only move a request bound elsewhere to a replica of its model
  }
  state_.replicas[seq.queued_replica].queue.erase(*stolen, seq);
  seq.queued_replica = index;
  seq.gpu = replica.gpu;
  replica.queue.push(*stolen, seq, seq.queue_key,
                     TtftPredictor::cached_tokens(state_, replica, seq));
  ++state_.kv_stats.steals;
  return true;
}

}  // namespace gangway
