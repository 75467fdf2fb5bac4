#include "kv/host_kv_tier.h"

#include <stdexcept>
#include <string>

namespace gangway {

HostKvTier::HostKvTier(int64_t capacity_bytes, bool keep_evicted_prefixes)
    : capacity_bytes_(capacity_bytes), keep_evicted_prefixes_(keep_evicted_prefixes) {}

uint64_t HostKvTier::key_of(uint32_t key, BlockHash hash) {
  // A bijection of the hash for a fixed key; distinct keys land apart. The entry keeps (key,
  // hash) too, so a collision between keys is detected, not trusted.
  return hash ^ (static_cast<uint64_t>(key + 1) * 0xd6e8feb86659fd93ULL);
}

uint32_t HostKvTier::find(uint32_t key, BlockHash hash) const {
  const uint32_t entry = index_.find(key_of(key, hash));
  if (entry == kNone) return kNone;
  const Entry& e = entries_[entry];
  return e.owner == key && e.hash == hash ? entry : kNone;
}

bool HostKvTier::contains(uint32_t key, BlockHash hash) const {
  return find(key, hash) != kNone;
}

void HostKvTier::remove(uint32_t entry) {
  lru_.remove(entries_, entry);
  Entry& e = entries_[entry];
  index_.erase(e.map_key);
  kept_bytes_ -= e.bytes;
  e = Entry{};
  free_entries_.push_back(entry);
}

bool HostKvTier::evict_oldest() {
  if (lru_.empty()) return false;
  remove(lru_.oldest());
  ++evicted_blocks_;
  return true;
}

bool HostKvTier::reserve_swap(int64_t bytes) {
  if (bytes > swappable_bytes()) return false;
  while (used_bytes() + bytes > capacity_bytes_) evict_oldest();
  swapped_bytes_ += bytes;
  return true;
}

void HostKvTier::release_swap(int64_t bytes) {
  swapped_bytes_ -= bytes;
}

void HostKvTier::keep(uint32_t key, BlockHash hash, int64_t bytes) {
  if (!keep_evicted_prefixes_ || bytes > capacity_bytes_ - swapped_bytes_) return;
  // Already kept, or (astronomically unlikely) a block under another key maps to the same slot.
  if (index_.contains(key_of(key, hash))) return;
  while (used_bytes() + bytes > capacity_bytes_) evict_oldest();
  uint32_t entry;
  if (!free_entries_.empty()) {
    entry = free_entries_.back();
    free_entries_.pop_back();
  } else {
    entry = static_cast<uint32_t>(entries_.size());
    entries_.emplace_back();
  }
  Entry& e = entries_[entry];
  e.map_key = key_of(key, hash);
  e.hash = hash;
  e.bytes = bytes;
  e.owner = key;
  lru_.append(entries_, entry);
  index_.insert(e.map_key, entry);
  kept_bytes_ += bytes;
}

int32_t HostKvTier::match(uint32_t key, std::span<const BlockHash> hashes, int32_t from,
                          int32_t limit) const {
  if (index_.empty()) return 0;
  int32_t count = 0;
  for (auto i = static_cast<size_t>(from); i < hashes.size() && count < limit; ++i) {
    if (find(key, hashes[i]) == kNone) break;
    ++count;
  }
  return count;
}

void HostKvTier::touch(uint32_t key, std::span<const BlockHash> hashes, int32_t from,
                       int32_t count) {
  for (int32_t i = 0; i < count; ++i) {
    const uint32_t entry = find(key, hashes[static_cast<size_t>(from) + static_cast<size_t>(i)]);
    if (entry == kNone) throw std::logic_error("HostKvTier::touch: block not kept");
    lru_.remove(entries_, entry);
    lru_.append(entries_, entry);
  }
}

void HostKvTier::check() const {
  auto violated = [](const std::string& what) {
    throw std::logic_error("host KV tier invariant violated: " + what);
  };
  if (swapped_bytes_ < 0 || kept_bytes_ < 0) violated("negative byte count");
  if (used_bytes() > capacity_bytes_) {
    violated("uses " + std::to_string(used_bytes()) + " bytes of " +
             std::to_string(capacity_bytes_));
  }
  int64_t bytes = 0;
  size_t listed = 0;
  uint32_t previous = kNone;
  for (uint32_t entry = lru_.oldest(); entry != kNone; entry = entries_[entry].lru_next) {
    const Entry& e = entries_[entry];
    if (e.lru_prev != previous) violated("LRU list links broken");
    if (index_.find(e.map_key) != entry) violated("a kept block is missing from the index");
    bytes += e.bytes;
    ++listed;
    previous = entry;
    if (listed > entries_.size()) violated("LRU list has a cycle");
  }
  if (previous != lru_.newest()) violated("LRU list tail wrong");
  if (listed != index_.size()) violated("index and LRU list disagree on the kept blocks");
  if (bytes != kept_bytes_) violated("kept bytes out of step with the kept blocks");
}

}  // namespace gangway
