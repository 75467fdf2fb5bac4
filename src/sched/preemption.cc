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

#include "kv/kv_layout.h"
#include "sched/scheduler.h"

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
  } else {
    Replica& replica = state_.replicas[seq.running_replica];
    list = seq.paused ? &replica.paused : &replica.running;
    resident_prefill = &replica.resident_prefill_tokens;
  }
  list->erase(std::find(list->begin(), list->end(), handle));
  if (!seq.paused) *resident_prefill -= seq.remaining_prefill_tokens();
  seq.paused = false;
  release_kv(seq, pool_of(seq));
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
  count_transition(seq, SequenceState::kFinished, SequenceState::kQueued);
  if (seq.large) {
    state_.large->queue.push(handle, seq, seq.queue_key);
  } else {
    const uint32_t replica = seq.running_replica;
    seq.running_replica = kNoReplica;
    seq.queued_replica = replica;
    state_.replicas[replica].queue.push(handle, seq, seq.queue_key);
  }
}

void Scheduler::drop_for_recompute(SequenceHandle handle) {
  Sequence& seq = state_.sequences[handle];
  take_off_engine(seq, handle);
  count_transition(seq, SequenceState::kRunning, SequenceState::kFinished);
  seq.prefill_target_tokens = seq.spec.prompt_tokens + seq.generated_tokens;
  seq.kv_tokens = 0;
  seq.kv_ready = Time::zero();
  requeue_preempted(handle);
}

void Scheduler::swap_out(SequenceHandle handle, Time now) {
  Sequence& seq = state_.sequences[handle];
  const ModelSpec& model = node_.model(seq.spec.model);
  state_.host.reserve_swap(host_bytes(model, seq.kv_tokens));
  state_.kv_stats.host_peak_bytes =
      std::max(state_.kv_stats.host_peak_bytes, state_.host.used_bytes());
  take_off_engine(seq, handle);
  count_transition(seq, SequenceState::kRunning, SequenceState::kFinished);
  seq.swapped = true;
  // The copy to host memory ends then; the copy back cannot start before.
  seq.kv_ready = std::max(now, seq.kv_ready) + kv_swap_time(model, node_.hardware, seq.kv_tokens);
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
  swap_option.feasible =
      seq.kv_tokens > 0 && host_bytes(model, seq.kv_tokens) <= state_.host.swappable_bytes();
  swap_option.victim_delay_s = 2 * to_seconds(kv_swap_time(model, node_.hardware, seq.kv_tokens));
  // Its published prompt blocks stay cached when dropped: only the rest is computed again. When
  // the memory itself is needed, those nobody else holds are the next blocks evicted: then they
  // come back from the host tier (a load) if it keeps evicted prefixes, else they are computed
  // again too. Blocks another sequence shares stay on the GPU either way.
  int32_t still_cached =
      std::min(seq.published_blocks * block_tokens, std::max(0, seq.kv_tokens - 1));
  double reload_s = 0;
  if (memory_needed) {
    const BlockPool& pool = pool_of(seq);
    int32_t shared_blocks = 0;
    while (shared_blocks < seq.published_blocks &&
           pool.refs_of(seq.blocks[static_cast<size_t>(shared_blocks)]) > 1) {
      ++shared_blocks;
    }
    const int32_t shared = std::min(shared_blocks * block_tokens, still_cached);
    if (state_.host.keeps_prefixes()) {
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

void Scheduler::preempt_resident_small(GpuRuntime& gpu, Time now) {
  for (uint32_t index : gpu.replicas) {
    Replica& replica = state_.replicas[index];
    while (!replica.running.empty()) {
      preempt(replica.running.back(), now, PreemptionReason::kGang, /*memory_needed=*/false);
    }
  }
}

void Scheduler::record_gang_pauses() {
  // Lease mode: the small sequences still resident when a lease starts pause in place (their KV
  // stays; nobody needs it: the large model has its own pool). Counted as the choice it is.
  if (policy_->mode() != ExecutionMode::kLease) return;
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

// ---------------------------------------------------------------------------------------------
// The dynamic split.

void Scheduler::rebalance_kv(Time now) {
  if (options_.kv_split != KvSplit::kDynamic || !state_.large) return;
  if (last_rebalance_ && now - *last_rebalance_ < options_.kv_rebalance_interval) return;
  LargeModelRuntime& large = *state_.large;
  bool small_short = false;
  for (const Replica& replica : state_.replicas) small_short |= replica.kv_shortfall_blocks > 0;
  const bool large_short = large.kv_shortfall_blocks > 0;
  const double fraction = state_.large_kv_fraction;
  constexpr double kEpsilon = 1e-9;
  bool moved = false;
  if (large_short && fraction < options_.large_kv_fraction_max - kEpsilon) {
    // The large model's admissions wait for memory: take a step from the small models. While the
    // gang holds the GPUs their resident sequences are paused anyway and may be preempted (by
    // cost) for it; otherwise only their free and cached blocks move.
    const double target =
        std::min(options_.large_kv_fraction_max, fraction + options_.kv_rebalance_step);
    moved = apply_large_kv_fraction(target, now, state_.gang.phase == GangPhase::kActive);
    if (moved) ++state_.kv_stats.split_moves_to_large;
  } else if (small_short && !large_short && fraction > options_.large_kv_fraction_min + kEpsilon) {
    // The small models wait for memory and the large model does not: give a step back, from
    // its free and cached blocks only (its resident sequences are never preempted for it).
    const double target =
        std::max(options_.large_kv_fraction_min, fraction - options_.kv_rebalance_step);
    moved = apply_large_kv_fraction(target, now, false);
    if (moved) ++state_.kv_stats.split_moves_to_small;
  }
  large.kv_shortfall_blocks = 0;
  for (Replica& replica : state_.replicas) replica.kv_shortfall_blocks = 0;
  if (moved) last_rebalance_ = now;
}

bool Scheduler::apply_large_kv_fraction(double fraction, Time now, bool may_preempt_small) {
  const KvLayout layout = compute_kv_layout(node_, fraction);
  LargeModelRuntime& large = *state_.large;
  if (fraction > state_.large_kv_fraction) {
    // Small pools shrink first. Check that every one can before changing any.
    for (const Replica& replica : state_.replicas) {
      const int64_t shrink = replica.kv.capacity_blocks() -
                             layout.small_blocks[replica.gpu.value()][replica.model.value()];
      if (shrink <= replica.kv.available_blocks()) continue;
      if (!may_preempt_small || state_.gpus[replica.gpu.value()].small_busy) return false;
    }
    for (Replica& replica : state_.replicas) {
      const int64_t capacity = layout.small_blocks[replica.gpu.value()][replica.model.value()];
      const int64_t shrink = replica.kv.capacity_blocks() - capacity;
      // Youngest first, paused ones (exclusive mode) before running ones.
      while (shrink > replica.kv.available_blocks() &&
             (!replica.paused.empty() || !replica.running.empty())) {
        const SequenceHandle victim =
            !replica.paused.empty() ? replica.paused.back() : replica.running.back();
        preempt(victim, now, PreemptionReason::kSplit, /*memory_needed=*/true);
      }
      if (!replica.kv.set_capacity(capacity)) return false;  // cannot happen: all yielded
    }
    large.kv.set_capacity(layout.large_blocks);
  } else {
    if (large.kv.capacity_blocks() - layout.large_blocks > large.kv.available_blocks()) {
      return false;
    }
    large.kv.set_capacity(layout.large_blocks);
    for (Replica& replica : state_.replicas) {
      replica.kv.set_capacity(layout.small_blocks[replica.gpu.value()][replica.model.value()]);
    }
  }
  state_.large_kv_fraction = fraction;
  state_.kv_stats.large_kv_fraction_lowest =
      std::min(state_.kv_stats.large_kv_fraction_lowest, fraction);
  state_.kv_stats.large_kv_fraction_highest =
      std::max(state_.kv_stats.large_kv_fraction_highest, fraction);
  return true;
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
  replica.queue.push(*stolen, seq, seq.queue_key);
  ++state_.kv_stats.steals;
  return true;
}

}  // namespace gangway
