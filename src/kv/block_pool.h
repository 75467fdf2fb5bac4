// A pool of paged KV blocks for one model on one engine (a GPU's replica of a small model, or the
// large model's pool, the same on every GPU of its gang), with the prefix cache of that engine:
// reference counts, a hash-chained block index and eviction.
//
// Every block is in exactly one of four states:
//   unused      free, holding nothing;
//   referenced  held by one or more sequences (refs > 0); shared prompt blocks have refs > 1;
//   cached      held by nobody but indexed by its hash: a computed prompt block kept for reuse,
//               evictable; counts as available memory;
//   retired     beyond the pool's current capacity (the dynamic KV split lends it to the other
//               tier); only moves back when the capacity grows.
// capacity = unused + referenced + cached. Blocks are named by dense ids; what the ids stand for
// on a GPU is the engine's business (this is accounting, not memory).
//
// The index (why a hash-chained table, not a token radix tree): requests carry chained hashes
// of their full prompt blocks (RequestSpec::prefix_blocks), so equal hashes mean equal prefixes
// and a flat hash -> block table is a radix tree with one block per edge. It is kept closed
// under prefixes: a block is indexed only below its indexed parent, and only leaves are
// evicted. Then "the first k blocks are cached" is monotone in k, and the longest cached prefix
// of a prompt is found by binary search: O(log n) probes, not n (eight lookups of a 2k-token
// prompt per routing decision cost well under a microsecond).
//
// Eviction order (why LRU over leaves): a cached block's value is the chance it is hit again
// before it is evicted, which recency predicts well for the sources of reuse here (system
// prompts, multi-turn sessions), as in vLLM and SGLang. Cached blocks sit in one LRU list;
// releases append a sequence's blocks tail first and hits move a whole matched prefix, so a
// parent is always more recent than its children and the list's oldest block is always a leaf.
// An evicted block goes to the host tier if one is attached (evicted-but-kept), else is lost.
//
// Errors that can only be scheduler bugs (releasing a block nobody holds, publishing under a
// parent that is not indexed) throw std::logic_error at once: reference counts never go
// negative, and check() verifies the whole structure.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "core/request.h"
#include "kv/block_hash_map.h"
#include "kv/host_kv_tier.h"
#include "kv/intrusive_lru.h"

namespace gangway {

using BlockId = uint32_t;
inline constexpr BlockId kNoBlock = std::numeric_limits<BlockId>::max();

class BlockPool {
 public:
  BlockPool() = default;
  // max_capacity_blocks: the most this pool may ever be given by set_capacity (the dynamic KV
  // split); defaults to capacity_blocks.
  explicit BlockPool(int64_t capacity_blocks, int64_t max_capacity_blocks = -1);

  // Evicted prefix blocks go to `host` under `host_key`, `block_bytes` each. Optional. Pools
  // that can load each other's blocks share a key (every GPU's replica of one model: host memory
  // is reachable from every GPU).
  void attach_host(HostKvTier* host, uint32_t host_key, int64_t block_bytes);
  // With prefix caching off nothing is published: released blocks become unused at once.
  void set_prefix_caching(bool enabled) {
    prefix_caching_ = enabled;
    ++mutations_;
  }
  bool prefix_caching() const { return prefix_caching_; }

  int64_t capacity_blocks() const { return capacity_blocks_; }
  int64_t max_capacity_blocks() const { return static_cast<int64_t>(blocks_.size()); }
  // Blocks held by sequences.
  int64_t used_blocks() const { return referenced_blocks_; }
  // Unreferenced cached prefix blocks (evictable).
  int64_t cached_blocks() const { return cached_blocks_; }
  int64_t unused_blocks() const { return static_cast<int64_t>(unused_.size()); }
  // What an allocation may take: unused blocks, then cached ones by eviction.
  int64_t available_blocks() const { return unused_blocks() + cached_blocks_; }
  // All indexed blocks, referenced or not.
  int64_t indexed_blocks() const { return static_cast<int64_t>(index_.size()); }
  // Sum of reference counts (= block references held by sequences).
  int64_t references() const { return references_; }
  double usage() const {
    return capacity_blocks_ == 0 ? 0.0 : static_cast<double>(referenced_blocks_) / capacity_blocks_;
  }
  int32_t refs_of(BlockId block) const { return blocks_[block].refs; }
  bool indexed(BlockId block) const { return blocks_[block].indexed; }
  BlockHash hash_of(BlockId block) const { return blocks_[block].hash; }
  uint32_t host_key() const { return host_key_; }
  HostKvTier* host() const { return host_; }
  int64_t block_bytes() const { return block_bytes_; }
  // Cached blocks evicted to make room since construction.
  int64_t evicted_blocks() const { return evicted_blocks_; }

  // The number of leading blocks of `hashes` whose blocks are indexed here (the longest cached
  // prefix), by binary search. Reads only: no recency is touched.
  int32_t match(std::span<const BlockHash> hashes) const;
  // The blocks of the first `count` blocks of `hashes` (REQUIRES: count <= match(hashes)),
  // appended to `out` in prompt order, found with one lookup and a walk up the parent links;
  // returns how many of them are unreferenced (acquiring them takes that many blocks out of
  // available_blocks()).
  int32_t collect_prefix(std::span<const BlockHash> hashes, int32_t count,
                         std::vector<BlockId>& out) const;
  // Of the first `count` blocks of `hashes`, how many are unreferenced (collect_prefix's count).
  int32_t unreferenced_in_prefix(std::span<const BlockHash> hashes, int32_t count) const;
  // Takes a reference on each block of `blocks` (indexed blocks, e.g. from collect_prefix).
  void acquire_blocks(std::span<const BlockId> blocks);
  // Takes a reference on each of the first `count` blocks of `hashes` (REQUIRES: count <=
  // match(hashes)) and appends their ids to `out`.
  void acquire(std::span<const BlockHash> hashes, int32_t count, std::vector<BlockId>& out);

  // Takes `count` fresh blocks (one reference each), evicting the least recently used cached
  // blocks if unused ones run out, and appends them to `out`. False (nothing taken) if
  // count > available_blocks().
  bool allocate(int64_t count, std::vector<BlockId>& out);
  // Publishes a freshly computed prompt block (held once, by the caller, not indexed) under
  // `hash`, as the child of `parent` (kNoBlock for a prompt's first block; else an indexed
  // block). Returns the block the caller should hold from now on: `block` itself, or, if the hash
  // is already indexed (another sequence computed the same prefix), that block, with the
  // caller's reference moved to it and `block` freed. With prefix caching off, returns `block`
  // unpublished.
  BlockId publish(BlockId block, BlockHash hash, BlockId parent);
  // Starts loading the index entries that publishing `hashes` reads (a sequence's computed
  // blocks are published one after another; their index lines are mostly not in cache).
  void prefetch_index(std::span<const BlockHash> hashes) const {
    for (const BlockHash hash : hashes) index_.prefetch(hash);
  }
  // Drops one reference on each block, last block first (so a chain's tail is older in the LRU
  // list than its head). A block nobody holds any more becomes cached if indexed, else unused.
  void release(std::span<const BlockId> blocks);

  // Grows or shrinks the pool (dynamic KV split). Shrinking takes unused blocks first, then
  // evicts cached ones; false (nothing changed) if referenced blocks would not fit.
  // REQUIRES: blocks <= max_capacity_blocks().
  bool set_capacity(int64_t blocks);

  // Forgets every cached (unreferenced) prefix block, as when the GPU holding them is lost: they
  // become unused, are not counted as evictions and do not go to the host tier (their contents
  // are gone). Blocks still held keep their index entries. O(cached blocks).
  void drop_cached();

  // Throws std::logic_error naming the first broken invariant of the pool's structure: state
  // counts add up to the capacity, the LRU list holds exactly the cached blocks and its oldest is
  // a leaf, children counts and the index agree, the index is closed under prefixes.
  // O(max capacity) when the pool changed since the last check that passed, O(1) otherwise (an
  // unchanged pool cannot have broken anything since).
  void check() const;

 private:
  struct Block {
    BlockHash hash = 0;
    BlockId parent = kNoBlock;
    BlockId lru_prev = kNoBlock;
    BlockId lru_next = kNoBlock;
    int32_t refs = 0;
    int32_t children = 0;  // indexed blocks whose parent this is
    bool indexed = false;
    bool retired = false;
  };

  // A block nobody references: an unused one if any, else the least recently used cached one.
  BlockId take_available();
  // Removes the oldest cached block from the index (and LRU list) and returns it, unused.
  BlockId evict_oldest();
  void unindex(BlockId block);
  mutable std::vector<BlockId> scratch_;

  std::vector<Block> blocks_;
  std::vector<BlockId> unused_;
  std::vector<BlockId> retired_;
  BlockHashMap index_;  // hash -> indexed block
  int64_t capacity_blocks_ = 0;
  int64_t referenced_blocks_ = 0;
  int64_t cached_blocks_ = 0;
  int64_t references_ = 0;
  int64_t evicted_blocks_ = 0;
  IntrusiveLru lru_;  // the cached blocks, oldest first
  bool prefix_caching_ = true;
  HostKvTier* host_ = nullptr;
  uint32_t host_key_ = 0;
  int64_t block_bytes_ = 0;
  // Counts the changes to the pool's state; check() remembers the count it last passed at.
  uint64_t mutations_ = 0;
  mutable uint64_t checked_at_mutations_ = std::numeric_limits<uint64_t>::max();
};

// Blocks needed to hold `tokens` tokens.
inline int64_t blocks_for_tokens(int64_t tokens, int32_t block_tokens) {
  return (tokens + block_tokens - 1) / block_tokens;
}

}  // namespace gangway
