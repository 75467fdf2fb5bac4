// Host memory as the second KV tier, reached over PCIe: one byte budget for the whole node
// (node.host_memory_gib) shared by two kinds of content.
//
//  - Swap space: the KV of sequences swapped out of a GPU (preemption by swap). It is reserved
//    whole when the sequence leaves the GPU and released when it comes back; it is never evicted.
//  - Kept prefix blocks: prompt blocks a GPU pool evicted from its prefix cache, kept here so that
//    a later hit loads them over PCIe instead of recomputing them: a victim cache behind the
//    GPUs' caches. They are found by (key, block hash); the key is the model's: every GPU can
//    read host memory, so a block one GPU evicted can be loaded by any GPU holding a replica of
//    that model (the large model has its own key). Loading copies (the block may be needed by
//    another GPU next) and makes the block the most recently used; kept blocks are evicted least
//    recently used first whenever swap space or newer kept blocks need the room. A kept block may
//    therefore also be cached on some GPU: that copy serves that GPU only.
//
// Counts only, like BlockPool: the bytes are not modelled, the accounting is. No clock: the
// caller times the copies with kv_swap_time().
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/request.h"
#include "kv/block_hash_map.h"
#include "kv/intrusive_lru.h"

namespace gangway {

class HostKvTier {
 public:
  HostKvTier() = default;
  // keep_evicted_prefixes: whether pools may keep evicted prefix blocks here at all.
  HostKvTier(int64_t capacity_bytes, bool keep_evicted_prefixes);

  int64_t capacity_bytes() const { return capacity_bytes_; }
  int64_t swapped_bytes() const { return swapped_bytes_; }
  int64_t kept_bytes() const { return kept_bytes_; }
  int64_t used_bytes() const { return swapped_bytes_ + kept_bytes_; }
  int64_t kept_blocks() const { return static_cast<int64_t>(index_.size()); }
  bool keeps_prefixes() const { return keep_evicted_prefixes_; }
  // Bytes swap space could still get (kept prefix blocks give way to it).
  int64_t swappable_bytes() const { return capacity_bytes_ - swapped_bytes_; }

  // Swap space. reserve_swap evicts kept prefix blocks as needed; false (nothing changed) when
  // even that leaves too little room.
  bool reserve_swap(int64_t bytes);
  // REQUIRES: bytes <= swapped_bytes().
  void release_swap(int64_t bytes);

  // A pool evicted a prefix block: keep it if prefixes are kept, making room by evicting the
  // oldest kept blocks (never swap space). Dropped when one block does not fit at all.
  void keep(uint32_t key, BlockHash hash, int64_t bytes);
  // How many of hashes[from], hashes[from + 1], ... (at most `limit`) are kept under `key`, in an
  // unbroken run.
  int32_t match(uint32_t key, std::span<const BlockHash> hashes, int32_t from, int32_t limit) const;
  // Marks hashes[from, from + count) of `key` most recently used (a GPU is loading them).
  // REQUIRES: match(key, hashes, from, count) == count.
  void touch(uint32_t key, std::span<const BlockHash> hashes, int32_t from, int32_t count);
  bool contains(uint32_t key, BlockHash hash) const;

  // Kept blocks evicted for room since construction (a measure of host pressure).
  int64_t evicted_blocks() const { return evicted_blocks_; }

  // Throws std::logic_error naming the broken invariant: byte counts equal what the entries and
  // the swap reservations hold, within capacity, and the LRU list holds exactly the entries.
  void check() const;

 private:
  static constexpr uint32_t kNone = BlockHashMap::kAbsent;
  struct Entry {
    uint64_t map_key = 0;  // key_of(owner, hash)
    BlockHash hash = 0;
    int64_t bytes = 0;
    uint32_t owner = 0;  // the key it is kept under
    uint32_t lru_prev = kNone;
    uint32_t lru_next = kNone;
  };

  static uint64_t key_of(uint32_t key, BlockHash hash);
  uint32_t find(uint32_t key, BlockHash hash) const;
  void remove(uint32_t entry);
  bool evict_oldest();

  int64_t capacity_bytes_ = 0;
  bool keep_evicted_prefixes_ = false;
  int64_t swapped_bytes_ = 0;
  int64_t kept_bytes_ = 0;
  int64_t evicted_blocks_ = 0;
  std::vector<Entry> entries_;
  std::vector<uint32_t> free_entries_;
  BlockHashMap index_;  // key_of(key, hash) -> entry
  IntrusiveLru lru_;    // the kept blocks, oldest first
};

}  // namespace gangway
