// The KV side of the scheduler core, in the spirit of vLLM's KVCacheManager: the block pools (one
// per replica, one for the large model's shard), prefix publishing, the host tier (swap space and
// kept prefix blocks), the KV copies in flight over PCIe, and the dynamic split of each GPU's KV
// memory between the tiers. It is the only writer of the pools, the host tier, the split
// (SchedulerState::large_kv_fraction) and the prefix-cache counters of KvStatistics; who is
// resident where is the batch builder's and the preemption's business.
//
// Admitting a queued sequence takes two calls, so that the caller can move the sequence from its
// queue to its running set in between (queued token counts are taken from its KV tokens before
// they change): plan_admission() finds what the pool can reuse (GPU prefix hits, host-tier
// prefix blocks, or a swapped sequence's own KV) and whether the first chunk fits beside the
// admission watermark; admit() takes the blocks and starts any copy from host memory.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/node_spec.h"
#include "core/time.h"
#include "kv/block_pool.h"
#include "sched/scheduler_options.h"
#include "sched/scheduler_state.h"

namespace gangway {

// Takes a resident sequence off its engine so that its pool can shrink (the dynamic split gives
// the memory to the other tier).
class KvEvictor {
 public:
  virtual ~KvEvictor() = default;
  virtual void evict_for_split(SequenceHandle handle, Time now) = 0;
};

// What admitting a queued sequence reuses: blocks cached in its pool, blocks loaded from the host
// tier after them, and the KV tokens it starts with (those, or a swapped sequence's own).
struct KvAdmissionPlan {
  int32_t gpu_blocks = 0;
  int32_t host_blocks = 0;
  int32_t kv_tokens = 0;
};

class KvManager {
 public:
  // Throws InputError where the options contradict each other or the node (the dynamic split's
  // bounds, swap without host memory) and where the node's memory layout does not fit.
  KvManager(const NodeSpec& node, const SchedulerOptions& options, SchedulerState& state);
  KvManager(const KvManager&) = delete;
  KvManager& operator=(const KvManager&) = delete;

  // Gives every replica and the large model (already in the state) its pool, attached to the
  // host tier, and sizes the KV statistics.
  void create_pools();

  BlockPool& pool_of(const Sequence& seq) {
    return seq.large ? state_.large->kv : state_.replicas[seq.running_replica].kv;
  }
  const BlockPool& pool_of(const Sequence& seq) const {
    return seq.large ? state_.large->kv : state_.replicas[seq.running_replica].kv;
  }
  // The most KV blocks any one engine of this model can ever have: a longer request never runs.
  int64_t largest_pool_blocks(const ModelSpec& model) const;
  // Host bytes of `tokens` tokens of KV of `model` (every shard of a TP model).
  static int64_t host_bytes(const ModelSpec& model, int64_t tokens) {
    return model.kv_bytes_per_token_per_gpu() * model.tensor_parallel * tokens;
  }

  // Whether queued `seq` can become resident in `pool` with a first chunk of at most
  // `budget` tokens, keeping the admission watermark free. If not, records in `shortfall_blocks`
  // how many blocks it lacked (the dynamic split's signal) and changes nothing else.
  bool plan_admission(const Sequence& seq, const BlockPool& pool, const ModelSpec& model,
                      int32_t budget, int64_t& shortfall_blocks, KvAdmissionPlan& plan);
  // Makes `seq` resident in `pool` as planned (the last plan_admission, which returned true):
  // takes the prefix blocks and new ones, copies host-tier blocks or its swapped KV back, counts
  // a first admission in the pool's prefix-cache counters (`pool_id`), publishes what is computed.
  void admit(Sequence& seq, BlockPool& pool, const ModelSpec& model, const KvAdmissionPlan& plan,
             uint32_t pool_id, Time now);
  // Publishes the sequence's newly computed full prompt blocks to its pool's prefix index.
  void publish_computed_blocks(Sequence& seq);
  // Gives back every block the resident sequence holds (it is leaving its engine).
  void release(Sequence& seq);

  // Whether the KV of `kv_tokens` tokens of `model` fits in host swap space now.
  bool swap_fits(const ModelSpec& model, int32_t kv_tokens) const;
  // Moves a sequence that just left its engine to host memory: reserves its swap space and sets
  // when the copy out ends.
  void swap_out(Sequence& seq, const ModelSpec& model, Time now);
  // Frees the swap space of a swapped sequence that ends without coming back.
  void discard_swapped(Sequence& seq);
  bool host_keeps_prefixes() const { return state_.host.keeps_prefixes(); }

  // Copies from host memory in flight: the scheduler wants a decision pass when each ends.
  void forget_copies_ended_by(Time now);
  // The end of the earliest copy after `now`, or Time::max().
  Time next_copy_end(Time now) const;

  // The dynamic split: every kv_rebalance_interval at most, moves a step of each GPU's KV memory
  // toward the tier whose admissions memory blocked since the last call. Small pools shrink
  // first; while the gang is active their resident sequences may be evicted for it.
  void rebalance(Time now, bool gang_active, KvEvictor& evictor);

  // Updates the host tier's high-water mark (after every event).
  void note_host_usage();

 private:
  void note_copy_end(Time ready);
  void record_first_admission(const Sequence& seq, uint32_t pool_id);
  bool apply_large_kv_fraction(double fraction, Time now, bool may_evict_small, KvEvictor& evictor);

  const NodeSpec& node_;
  const SchedulerOptions& options_;
  SchedulerState& state_;
  // Each pool's initial capacity and the most the dynamic split may give it.
  std::vector<std::vector<int64_t>> initial_small_blocks_;
  std::vector<std::vector<int64_t>> most_small_blocks_;
  int64_t initial_large_blocks_ = 0;
  int64_t most_large_blocks_ = 0;
  // Blocks of the admission planned last (prefix blocks, in prompt order).
  std::vector<BlockId> planned_blocks_;
  // Times at which KV copies from host memory end (a min-heap).
  std::vector<Time> copy_ends_;
  std::optional<Time> last_rebalance_;
};

}  // namespace gangway
