#include "sched/kv_manager.h"

#include <algorithm>
#include <functional>
#include <span>

#include "core/input_error.h"
#include "kv/kv_layout.h"

namespace gangway {

KvManager::KvManager(const NodeSpec& node, const SchedulerOptions& options, SchedulerState& state)
    : node_(node), options_(options), state_(state) {
  const bool dynamic = options_.kv_split == KvSplit::kDynamic;
  if (dynamic && !(options_.large_kv_fraction_min <= options_.large_kv_fraction &&
                   options_.large_kv_fraction <= options_.large_kv_fraction_max)) {
    throw InputError::at("", std::nullopt, "scheduler.large_kv_fraction",
                         "expected a value between scheduler.large_kv_fraction_min and "
                         "scheduler.large_kv_fraction_max with the dynamic split");
  }
  if (options_.preemption == PreemptionPolicy::kSwap && node_.host_memory_bytes <= 0) {
    throw InputError::at("", std::nullopt, "scheduler.preemption",
                         "swap needs host memory, but node.host_memory_gib is 0");
  }
  const KvLayout layout = compute_kv_layout(node_, options_.large_kv_fraction);
  // The dynamic split can give each pool at most what it has at its tier's extreme.
  const KvLayout most_large =
      dynamic ? compute_kv_layout(node_, options_.large_kv_fraction_max) : layout;
  const KvLayout most_small =
      dynamic ? compute_kv_layout(node_, options_.large_kv_fraction_min) : layout;
  initial_small_blocks_ = layout.small_blocks;
  most_small_blocks_ = most_small.small_blocks;
  initial_large_blocks_ = layout.large_blocks;
  most_large_blocks_ = most_large.large_blocks;
  state_.large_kv_fraction = node_.large_model() ? options_.large_kv_fraction : 0.0;
  state_.kv_stats.large_kv_fraction_lowest = state_.large_kv_fraction;
  state_.kv_stats.large_kv_fraction_highest = state_.large_kv_fraction;
  for (const GpuMemoryLayout& gpu : layout.gpus) state_.gpu_kv_bytes.push_back(gpu.kv_bytes);
  state_.host =
      HostKvTier(node_.host_memory_bytes, options_.prefix_caching && options_.host_prefix_cache);
}

void KvManager::create_pools() {
  for (Replica& replica : state_.replicas) {
    const size_t gpu = replica.gpu.value();
    const size_t model = replica.model.value();
    replica.kv = BlockPool(initial_small_blocks_[gpu][model], most_small_blocks_[gpu][model]);
  }
  if (state_.large) state_.large->kv = BlockPool(initial_large_blocks_, most_large_blocks_);
  // Evicted prefix blocks go to the host tier with their bytes (all shards of a TP model), kept
  // per model: any GPU holding a replica can load what another evicted.
  for (Replica& replica : state_.replicas) {
    replica.kv.set_prefix_caching(options_.prefix_caching);
    replica.kv.attach_host(&state_.host, replica.model.value(),
                           host_bytes(node_.model(replica.model), node_.kv_block_tokens));
  }
  if (state_.large) {
    state_.large->kv.set_prefix_caching(options_.prefix_caching);
    state_.large->kv.attach_host(
        &state_.host, state_.large->model.value(),
        host_bytes(node_.model(state_.large->model), node_.kv_block_tokens));
  }
  state_.kv_stats.pools.resize(state_.replicas.size() + 1);
  state_.kv_stats.preemptions_by_model.resize(node_.models.size());
}

int64_t KvManager::largest_pool_blocks(const ModelSpec& model) const {
  if (model.is_large()) return state_.large->kv.max_capacity_blocks();
  int64_t largest = 0;
  for (uint32_t index : state_.small_models[model.id.value()].replicas) {
    largest = std::max(largest, state_.replicas[index].kv.max_capacity_blocks());
  }
  return largest;
}

bool KvManager::plan_admission(const Sequence& seq, const BlockPool& pool, const ModelSpec& model,
                               int32_t budget, int64_t& shortfall_blocks, KvAdmissionPlan& plan) {
  const int32_t block_tokens = node_.kv_block_tokens;
  const auto watermark_blocks =
      static_cast<int64_t>(options_.kv_admission_watermark * pool.capacity_blocks());
  // What is on the GPU already (shared prefix blocks), what comes from host memory, and the
  // first chunk to compute.
  plan = KvAdmissionPlan{};
  if (seq.swapped) {
    plan.kv_tokens = seq.kv_tokens;
    const int32_t computed_prompt_blocks = std::min(
        plan.kv_tokens / block_tokens, static_cast<int32_t>(seq.spec.prefix_blocks.size()));
    if (pool.prefix_caching() && computed_prompt_blocks > 0) {
      plan.gpu_blocks = pool.match(std::span<const BlockHash>(
          seq.spec.prefix_blocks.data(), static_cast<size_t>(computed_prompt_blocks)));
    }
  } else {
    const int32_t reusable = seq.reusable_prefix_blocks(block_tokens);
    if (pool.prefix_caching() && reusable > 0) {
      const std::span<const BlockHash> prefix(seq.spec.prefix_blocks.data(),
                                              static_cast<size_t>(reusable));
      plan.gpu_blocks = pool.match(prefix);
      if (state_.host.keeps_prefixes() && plan.gpu_blocks < reusable) {
        plan.host_blocks =
            state_.host.match(pool.host_key(), prefix, plan.gpu_blocks, reusable - plan.gpu_blocks);
      }
    }
    plan.kv_tokens = (plan.gpu_blocks + plan.host_blocks) * block_tokens;
  }
  const int32_t first_chunk =
      std::min({seq.prefill_target_tokens - plan.kv_tokens, model.prefill_chunk_tokens, budget});
  const int64_t blocks_after_chunk =
      blocks_for_tokens(plan.kv_tokens + std::max(first_chunk, 0), block_tokens);
  const std::span<const BlockHash> prefix(seq.spec.prefix_blocks.data(),
                                          seq.spec.prefix_blocks.size());
  planned_blocks_.clear();
  const int64_t cost = pool.collect_prefix(prefix, plan.gpu_blocks, planned_blocks_) +
                       (blocks_after_chunk - plan.gpu_blocks);
  if (cost + watermark_blocks > pool.available_blocks()) {
    shortfall_blocks =
        std::max(shortfall_blocks, cost + watermark_blocks - pool.available_blocks());
    return false;
  }
  return true;
}

void KvManager::admit(Sequence& seq, BlockPool& pool, const ModelSpec& model,
                      const KvAdmissionPlan& plan, uint32_t pool_id, Time now) {
  const int32_t block_tokens = node_.kv_block_tokens;
  pool.acquire_blocks(planned_blocks_);
  seq.blocks.insert(seq.blocks.end(), planned_blocks_.begin(), planned_blocks_.end());
  seq.published_blocks = plan.gpu_blocks;
  if (seq.swapped) {
    // Swap in: the rest of its KV comes back from host memory, once the copy out has ended.
    const int32_t loaded_tokens = plan.kv_tokens - plan.gpu_blocks * block_tokens;
    pool.allocate(blocks_for_tokens(plan.kv_tokens, block_tokens) - plan.gpu_blocks, seq.blocks);
    state_.host.release_swap(host_bytes(model, plan.kv_tokens));
    seq.swapped = false;
    seq.kv_ready = std::max(now, seq.kv_ready) + kv_swap_time(model, node_.hardware, loaded_tokens);
  } else {
    if (plan.host_blocks > 0) {
      const std::span<const BlockHash> prefix(seq.spec.prefix_blocks.data(),
                                              seq.spec.prefix_blocks.size());
      state_.host.touch(pool.host_key(), prefix, plan.gpu_blocks, plan.host_blocks);
      pool.allocate(plan.host_blocks, seq.blocks);
      seq.kv_ready = now + kv_swap_time(model, node_.hardware,
                                        static_cast<int64_t>(plan.host_blocks) * block_tokens);
    }
    seq.kv_tokens = plan.kv_tokens;
    if (!seq.first_scheduled) {
      seq.cached_prompt_tokens = plan.kv_tokens;
      seq.host_cached_prompt_tokens = plan.host_blocks * block_tokens;
      record_first_admission(seq, pool_id);
    }
  }
  seq.kv_blocks = static_cast<int32_t>(seq.blocks.size());
  publish_computed_blocks(seq);
  if (seq.kv_ready > now) note_copy_end(seq.kv_ready);
}

void KvManager::publish_computed_blocks(Sequence& seq) {
  BlockPool& pool = pool_of(seq);
  if (!pool.prefix_caching()) return;
  const int32_t full_blocks = seq.kv_tokens / node_.kv_block_tokens;
  const int32_t limit = std::min(full_blocks, static_cast<int32_t>(seq.spec.prefix_blocks.size()));
  if (limit <= seq.published_blocks) return;
  pool.prefetch_index(std::span<const BlockHash>(seq.spec.prefix_blocks)
                          .subspan(static_cast<size_t>(seq.published_blocks),
                                   static_cast<size_t>(limit - seq.published_blocks)));
  for (int32_t i = seq.published_blocks; i < limit; ++i) {
    const BlockId parent = i > 0 ? seq.blocks[static_cast<size_t>(i - 1)] : kNoBlock;
    seq.blocks[static_cast<size_t>(i)] = pool.publish(
        seq.blocks[static_cast<size_t>(i)], seq.spec.prefix_blocks[static_cast<size_t>(i)], parent);
    seq.published_blocks = i + 1;
  }
}

void KvManager::release(Sequence& seq) {
  pool_of(seq).release(seq.blocks);
  seq.blocks.clear();
  seq.kv_blocks = 0;
  seq.published_blocks = 0;
}

bool KvManager::swap_fits(const ModelSpec& model, int32_t kv_tokens) const {
  return host_bytes(model, kv_tokens) <= state_.host.swappable_bytes();
}

void KvManager::swap_out(Sequence& seq, const ModelSpec& model, Time now) {
  state_.host.reserve_swap(host_bytes(model, seq.kv_tokens));
  note_host_usage();
  seq.swapped = true;
  // The copy to host memory ends then; the copy back cannot start before.
  seq.kv_ready = std::max(now, seq.kv_ready) + kv_swap_time(model, node_.hardware, seq.kv_tokens);
}

void KvManager::discard_swapped(Sequence& seq) {
  state_.host.release_swap(host_bytes(node_.model(seq.spec.model), seq.kv_tokens));
  seq.swapped = false;
}

void KvManager::note_copy_end(Time ready) {
  copy_ends_.push_back(ready);
  std::push_heap(copy_ends_.begin(), copy_ends_.end(), std::greater<>());
}

void KvManager::forget_copies_ended_by(Time now) {
  while (!copy_ends_.empty() && copy_ends_.front() <= now) {
    std::pop_heap(copy_ends_.begin(), copy_ends_.end(), std::greater<>());
    copy_ends_.pop_back();
  }
}

Time KvManager::next_copy_end(Time now) const {
  // The heap's earliest entry is in the future after any decision pass; scan only if asked
  // about a later time.
  if (copy_ends_.empty()) return Time::max();
  if (copy_ends_.front() > now) return copy_ends_.front();
  Time next = Time::max();
  for (const Time ready : copy_ends_) {
    if (ready > now) next = std::min(next, ready);
  }
  return next;
}

void KvManager::record_first_admission(const Sequence& seq, uint32_t pool_id) {
  if (seq.spec.arrival < options_.statistics_from) return;
  PrefixCacheCounters& counters = state_.kv_stats.pools[pool_id];
  ++counters.requests;
  counters.prompt_tokens += seq.spec.prompt_tokens;
  counters.cached_tokens += seq.cached_prompt_tokens;
  counters.host_tokens += seq.host_cached_prompt_tokens;
  if (seq.cached_prompt_tokens > 0) ++counters.hit_requests;
}

void KvManager::note_host_usage() {
  state_.kv_stats.host_peak_bytes =
      std::max(state_.kv_stats.host_peak_bytes, state_.host.used_bytes());
}

void KvManager::rebalance(Time now, bool gang_active, KvEvictor& evictor) {
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
    moved = apply_large_kv_fraction(target, now, gang_active, evictor);
    if (moved) ++state_.kv_stats.split_moves_to_large;
  } else if (small_short && !large_short && fraction > options_.large_kv_fraction_min + kEpsilon) {
    // The small models wait for memory and the large model does not: give a step back, from
    // its free and cached blocks only (its resident sequences are never preempted for it).
    const double target =
        std::max(options_.large_kv_fraction_min, fraction - options_.kv_rebalance_step);
    moved = apply_large_kv_fraction(target, now, false, evictor);
    if (moved) ++state_.kv_stats.split_moves_to_small;
  }
  large.kv_shortfall_blocks = 0;
  for (Replica& replica : state_.replicas) replica.kv_shortfall_blocks = 0;
  if (moved) last_rebalance_ = now;
}

bool KvManager::apply_large_kv_fraction(double fraction, Time now, bool may_evict_small,
                                        KvEvictor& evictor) {
  const KvLayout layout = compute_kv_layout(node_, fraction);
  LargeModelRuntime& large = *state_.large;
  if (fraction > state_.large_kv_fraction) {
    // Small pools shrink first. Check that every one can before changing any.
    for (const Replica& replica : state_.replicas) {
      const int64_t shrink = replica.kv.capacity_blocks() -
                             layout.small_blocks[replica.gpu.value()][replica.model.value()];
      if (shrink <= replica.kv.available_blocks()) continue;
      if (!may_evict_small || state_.gpus[replica.gpu.value()].small_busy) return false;
    }
    for (Replica& replica : state_.replicas) {
      const int64_t capacity = layout.small_blocks[replica.gpu.value()][replica.model.value()];
      const int64_t shrink = replica.kv.capacity_blocks() - capacity;
      // Youngest first, paused ones (exclusive mode) before running ones.
      while (shrink > replica.kv.available_blocks() &&
             (!replica.paused.empty() || !replica.running.empty())) {
        const SequenceHandle victim =
            !replica.paused.empty() ? replica.paused.back() : replica.running.back();
        evictor.evict_for_split(victim, now);
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

}  // namespace gangway
