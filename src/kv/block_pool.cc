#include "kv/block_pool.h"

#include <stdexcept>
#include <string>

namespace gangway {

namespace {

[[noreturn]] void broken(const std::string& what) {
  throw std::logic_error("KV block pool invariant violated: " + what);
}

}  // namespace

BlockPool::BlockPool(int64_t capacity_blocks, int64_t max_capacity_blocks)
    : capacity_blocks_(capacity_blocks) {
  if (max_capacity_blocks < capacity_blocks) max_capacity_blocks = capacity_blocks;
  blocks_.resize(static_cast<size_t>(max_capacity_blocks));
  unused_.reserve(blocks_.size());
  retired_.reserve(blocks_.size());
  for (int64_t b = max_capacity_blocks - 1; b >= capacity_blocks; --b) {
    blocks_[b].retired = true;
    retired_.push_back(static_cast<BlockId>(b));
  }
  for (int64_t b = capacity_blocks - 1; b >= 0; --b) unused_.push_back(static_cast<BlockId>(b));
  index_.reserve(blocks_.size());
}

void BlockPool::attach_host(HostKvTier* host, uint32_t host_key, int64_t block_bytes) {
  ++mutations_;
  host_ = host;
  host_key_ = host_key;
  block_bytes_ = block_bytes;
}

void BlockPool::unindex(BlockId block) {
  Block& b = blocks_[block];
  index_.erase(b.hash);
  if (b.parent != kNoBlock) --blocks_[b.parent].children;
  b.indexed = false;
  b.parent = kNoBlock;
  b.hash = 0;
}

BlockId BlockPool::take_available() {
  if (unused_.empty()) return evict_oldest();
  const BlockId block = unused_.back();
  unused_.pop_back();
  return block;
}

BlockId BlockPool::evict_oldest() {
  const BlockId victim = lru_.oldest();
  if (victim == kNoBlock) broken("eviction with no cached block");
  if (blocks_[victim].children != 0) broken("the oldest cached block is not a leaf");
  lru_.remove(blocks_, victim);
  --cached_blocks_;
  if (host_ != nullptr && host_->keeps_prefixes()) {
    host_->keep(host_key_, blocks_[victim].hash, block_bytes_);
  }
  unindex(victim);
  ++evicted_blocks_;
  // Every block cycles through the whole pool between two uses, so the next evictions' lines
  // (the next-oldest block with its index entry, and the one after it) are cold: start loading
  // them now, to arrive while the scheduler does other work.
  const BlockId next = lru_.oldest();
  if (next != kNoBlock) {
    index_.prefetch(blocks_[next].hash);
    const BlockId after = blocks_[next].lru_next;
    if (after != kNoBlock) __builtin_prefetch(&blocks_[after]);
  }
  return victim;
}

int32_t BlockPool::match(std::span<const BlockHash> hashes) const {
  // Most prompts share nothing with anything cached: one probe says so. A prompt cached whole
  // (a repeated request, the next turn of a chat) costs a second probe.
  if (hashes.empty() || index_.empty() || !index_.contains(hashes[0])) return 0;
  auto high = static_cast<int32_t>(hashes.size());
  if (index_.contains(hashes.back())) return high;
  // The index is closed under prefixes, so "block k-1 is indexed" is monotone in k.
  int32_t low = 1;
  --high;
  while (low < high) {
    const int32_t middle = low + (high - low + 1) / 2;
    if (index_.contains(hashes[static_cast<size_t>(middle - 1)])) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  return low;
}

int32_t BlockPool::collect_prefix(std::span<const BlockHash> hashes, int32_t count,
                                  std::vector<BlockId>& out) const {
  if (count <= 0) return 0;
  const uint32_t deepest = index_.find(hashes[static_cast<size_t>(count - 1)]);
  if (deepest == BlockHashMap::kAbsent) broken("collect_prefix past the cached prefix");
  const size_t first = out.size();
  out.resize(first + static_cast<size_t>(count));
  int32_t unreferenced = 0;
  BlockId block = deepest;
  for (int32_t i = count - 1; i >= 0; --i) {
    if (block == kNoBlock) broken("collect_prefix: the parent chain is shorter than the prefix");
    out[first + static_cast<size_t>(i)] = block;
    unreferenced += blocks_[block].refs == 0;
    block = blocks_[block].parent;
  }
  return unreferenced;
}

int32_t BlockPool::unreferenced_in_prefix(std::span<const BlockHash> hashes, int32_t count) const {
  scratch_.clear();
  return collect_prefix(hashes, count, scratch_);
}

void BlockPool::acquire_blocks(std::span<const BlockId> blocks) {
  ++mutations_;
  for (const BlockId block : blocks) {
    Block& b = blocks_[block];
    if (!b.indexed) broken("acquire of a block that is not indexed");
    if (b.refs == 0) {
      lru_.remove(blocks_, block);
      --cached_blocks_;
      ++referenced_blocks_;
    }
    ++b.refs;
    ++references_;
  }
}

void BlockPool::acquire(std::span<const BlockHash> hashes, int32_t count,
                        std::vector<BlockId>& out) {
  ++mutations_;
  const size_t first = out.size();
  collect_prefix(hashes, count, out);
  acquire_blocks(std::span<const BlockId>(out).subspan(first));
}

bool BlockPool::allocate(int64_t count, std::vector<BlockId>& out) {
  ++mutations_;
  if (count > available_blocks()) return false;
  for (int64_t i = 0; i < count; ++i) {
    const BlockId block = take_available();
    blocks_[block].refs = 1;
    ++referenced_blocks_;
    ++references_;
    out.push_back(block);
  }
  return true;
}

BlockId BlockPool::publish(BlockId block, BlockHash hash, BlockId parent) {
  ++mutations_;
  if (!prefix_caching_) return block;
  Block& b = blocks_[block];
  if (b.refs != 1 || b.indexed) broken("publish of a block that is shared or already indexed");
  const uint32_t existing = index_.find(hash);
  if (existing != BlockHashMap::kAbsent) {
    // Computed twice (two sequences prefilled the same prefix at once): keep the indexed copy.
    Block& e = blocks_[existing];
    if (e.refs == 0) {
      lru_.remove(blocks_, existing);
      --cached_blocks_;
      ++referenced_blocks_;
    }
    ++e.refs;
    ++references_;
    const BlockId mine[] = {block};
    release(mine);
    return existing;
  }
  if (parent != kNoBlock && !blocks_[parent].indexed) broken("publish under an unindexed parent");
  b.hash = hash;
  b.parent = parent;
  b.indexed = true;
  if (parent != kNoBlock) ++blocks_[parent].children;
  index_.insert(hash, block);
  return block;
}

void BlockPool::release(std::span<const BlockId> blocks) {
  ++mutations_;
  // A sequence's blocks were last touched when allocated: load them all at once, not one miss
  // after another.
  for (const BlockId block : blocks) __builtin_prefetch(&blocks_[block]);
  for (size_t i = blocks.size(); i-- > 0;) {
    const BlockId block = blocks[i];
    Block& b = blocks_[block];
    if (b.refs <= 0) broken("release of block " + std::to_string(block) + " that nobody holds");
    --b.refs;
    --references_;
    if (b.refs > 0) continue;
    --referenced_blocks_;
    if (b.indexed) {
      lru_.append(blocks_, block);
      ++cached_blocks_;
    } else {
      unused_.push_back(block);
    }
  }
}

bool BlockPool::set_capacity(int64_t blocks) {
  ++mutations_;
  if (blocks < 0 || blocks > max_capacity_blocks()) broken("capacity out of range");
  if (blocks >= capacity_blocks_) {
    for (int64_t i = capacity_blocks_; i < blocks; ++i) {
      const BlockId block = retired_.back();
      retired_.pop_back();
      blocks_[block].retired = false;
      unused_.push_back(block);
    }
    capacity_blocks_ = blocks;
    return true;
  }
  const int64_t shrink = capacity_blocks_ - blocks;
  if (shrink > available_blocks()) return false;
  for (int64_t i = 0; i < shrink; ++i) {
    const BlockId block = take_available();
    blocks_[block].retired = true;
    retired_.push_back(block);
  }
  capacity_blocks_ = blocks;
  return true;
}

void BlockPool::drop_cached() {
  ++mutations_;
  // Oldest first: the LRU order keeps the oldest a leaf, so each unindex leaves the index closed
  // under prefixes.
  while (!lru_.empty()) {
    const BlockId block = lru_.oldest();
    lru_.remove(blocks_, block);
    --cached_blocks_;
    unindex(block);
    unused_.push_back(block);
  }
}

void BlockPool::check() const {
  if (checked_at_mutations_ == mutations_) return;
  const size_t slots = blocks_.size();
  int64_t referenced = 0;
  int64_t cached = 0;
  int64_t unused = 0;
  int64_t retired = 0;
  int64_t references = 0;
  int64_t indexed = 0;
  std::vector<int32_t> children(slots, 0);
  for (size_t i = 0; i < slots; ++i) {
    const Block& b = blocks_[i];
    if (b.refs < 0) broken("block " + std::to_string(i) + " has a negative reference count");
    references += b.refs;
    if (b.retired) {
      if (b.refs != 0 || b.indexed) broken("a retired block is held or indexed");
      ++retired;
    } else if (b.refs > 0) {
      ++referenced;
    } else if (b.indexed) {
      ++cached;
    } else {
      ++unused;
    }
    if (b.indexed) {
      ++indexed;
      if (index_.find(b.hash) != i) broken("an indexed block is not found under its hash");
      if (b.parent != kNoBlock) {
        const Block& parent = blocks_[b.parent];
        if (!parent.indexed) broken("the index is not closed under prefixes");
        ++children[b.parent];
        if (b.refs > 0 && parent.refs == 0) broken("a held block's parent is not held");
      }
    }
  }
  for (size_t i = 0; i < slots; ++i) {
    if (children[i] != blocks_[i].children) broken("children count of a block is wrong");
  }
  if (indexed != static_cast<int64_t>(index_.size())) broken("index holds stale entries");
  if (referenced != referenced_blocks_) broken("referenced block count out of step");
  if (cached != cached_blocks_) broken("cached block count out of step");
  if (unused != unused_blocks()) broken("unused list out of step with unused blocks");
  if (retired != static_cast<int64_t>(retired_.size())) broken("retired list out of step");
  if (references != references_) broken("reference total out of step");
  if (referenced + cached + unused != capacity_blocks_) {
    broken("blocks leaked: " + std::to_string(referenced + cached + unused) + " accounted of " +
           std::to_string(capacity_blocks_));
  }
  for (const BlockId block : unused_) {
    const Block& b = blocks_[block];
    if (b.refs != 0 || b.indexed || b.retired) broken("the unused list holds a block in use");
  }
  // The LRU list: exactly the cached blocks; every cached child is older than its parent.
  std::vector<int64_t> position(slots, -1);
  int64_t listed = 0;
  BlockId previous = kNoBlock;
  for (BlockId block = lru_.oldest(); block != kNoBlock; block = blocks_[block].lru_next) {
    const Block& b = blocks_[block];
    if (b.lru_prev != previous) broken("LRU links broken");
    if (b.refs != 0 || !b.indexed) broken("the LRU list holds a block that is not cached");
    position[block] = listed++;
    previous = block;
    if (listed > cached_blocks_) broken("the LRU list is longer than the cached blocks");
  }
  if (previous != lru_.newest()) broken("LRU tail wrong");
  if (listed != cached_blocks_) broken("a cached block is missing from the LRU list");
  for (size_t i = 0; i < slots; ++i) {
    const Block& b = blocks_[i];
    if (b.indexed && b.refs == 0 && b.parent != kNoBlock && blocks_[b.parent].refs == 0 &&
        position[i] > position[b.parent]) {
      broken("a cached block is more recent than its parent (eviction would not be leaf first)");
    }
  }
  checked_at_mutations_ = mutations_;
}

}  // namespace gangway
