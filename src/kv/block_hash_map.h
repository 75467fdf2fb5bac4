// A hash map from 64-bit keys (KV block hashes) to 32-bit values (block or entry ids), for the
// prefix indexes. The indexes sit on the scheduler's decision path (every routing decision looks
// a prompt up in eight of them, every computed prompt block is published to one), so this is a
// flat open-addressing table with linear probing and backward-shift deletion: no node
// allocation, no tombstones, one or two cache lines per lookup. std::unordered_map costs an
// allocation per insert and a pointer chase per probe.
//
// Beside the slots sits one tag byte per slot: 0 for an empty slot, else seven bits of the
// key's hash. Probes read the tags and touch a slot only when its tag matches, so a lookup of an
// absent key (most of them: a new prompt's first block, a block about to be published) reads
// the tag array alone, 16 times smaller than the slots and so mostly in cache, instead of a
// slot line that is mostly not.
//
// Keys are arbitrary 64-bit words (block hashes are already well mixed; they are multiplied by a
// Fibonacci constant anyway, so structured keys spread too). The table doubles when it is half
// full; a pool's index is reserved for the pool's capacity up front and never grows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace gangway {

class BlockHashMap {
 public:
  static constexpr uint32_t kAbsent = std::numeric_limits<uint32_t>::max();

  BlockHashMap() { rehash(16); }

  // Makes room for `entries` entries without growing.
  void reserve(size_t entries) {
    size_t slots = 16;
    while (slots < 2 * entries) slots *= 2;
    if (slots > slots_.size()) rehash(slots);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The value stored for `key`, or kAbsent.
  uint32_t find(uint64_t key) const {
    const uint64_t mixed = mix(key);
    const uint8_t tag = tag_of(mixed);
    for (size_t i = home_of(mixed);; i = (i + 1) & mask_) {
      const uint8_t slot_tag = tags_[i];
      if (slot_tag == kEmptyTag) return kAbsent;
      if (slot_tag == tag && slots_[i].key == key) return slots_[i].value;
    }
  }
  bool contains(uint64_t key) const { return find(key) != kAbsent; }

  // Starts loading the lines a lookup, insertion or removal of `key` reads first (its home tag
  // and slot), so that a caller that knows its next keys early overlaps their cache misses.
  void prefetch(uint64_t key) const {
    const size_t i = home_of(mix(key));
    __builtin_prefetch(&tags_[i]);
    __builtin_prefetch(&slots_[i]);
  }

  // Inserts or overwrites. REQUIRES: value != kAbsent.
  void insert(uint64_t key, uint32_t value) {
    if (2 * (size_ + 1) > slots_.size()) rehash(2 * slots_.size());
    const uint64_t mixed = mix(key);
    const uint8_t tag = tag_of(mixed);
    for (size_t i = home_of(mixed);; i = (i + 1) & mask_) {
      const uint8_t slot_tag = tags_[i];
      if (slot_tag == kEmptyTag) {
        tags_[i] = tag;
        slots_[i] = Slot{key, value};
        ++size_;
        return;
      }
      if (slot_tag == tag && slots_[i].key == key) {
        slots_[i].value = value;
        return;
      }
    }
  }

  // Removes `key`; false if it was not there.
  bool erase(uint64_t key) {
    const uint64_t mixed = mix(key);
    const uint8_t tag = tag_of(mixed);
    size_t i = home_of(mixed);
    for (;; i = (i + 1) & mask_) {
      if (tags_[i] == kEmptyTag) return false;
      if (tags_[i] == tag && slots_[i].key == key) break;
    }
    // Backward shift: pull later entries of the probe run into the hole when their home allows.
    size_t hole = i;
    for (size_t j = (hole + 1) & mask_; tags_[j] != kEmptyTag; j = (j + 1) & mask_) {
      const size_t wanted = home_of(mix(slots_[j].key));
      // Entry j may move to `hole` if its home is not in the cyclic range (hole, j].
      const bool home_after_hole = ((j - wanted) & mask_) < ((j - hole) & mask_);
      if (!home_after_hole) {
        slots_[hole] = slots_[j];
        tags_[hole] = tags_[j];
        hole = j;
      }
    }
    tags_[hole] = kEmptyTag;
    slots_[hole].value = kAbsent;
    --size_;
    return true;
  }

  void clear() {
    std::fill(tags_.begin(), tags_.end(), kEmptyTag);
    for (Slot& slot : slots_) slot.value = kAbsent;
    size_ = 0;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t value = kAbsent;
  };
  static constexpr uint8_t kEmptyTag = 0;

  static uint64_t mix(uint64_t key) { return key * 0x9e3779b97f4a7c15ULL; }
  size_t home_of(uint64_t mixed) const { return static_cast<size_t>(mixed >> shift_); }
  // Seven bits of the mixed key below the ones home_of uses (tables up to 2^25 slots), with the
  // top bit set so that no tag equals kEmptyTag.
  static uint8_t tag_of(uint64_t mixed) {
    return static_cast<uint8_t>(0x80 | ((mixed >> 32) & 0x7f));
  }

  void rehash(size_t slots) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(slots, Slot{});
    tags_.assign(slots, kEmptyTag);
    mask_ = slots - 1;
    shift_ = 64;
    for (size_t s = slots; s > 1; s >>= 1) --shift_;
    size_ = 0;
    for (const Slot& slot : old) {
      if (slot.value != kAbsent) insert(slot.key, slot.value);
    }
  }

  std::vector<Slot> slots_;
  std::vector<uint8_t> tags_;  // per slot: kEmptyTag or tag_of(mix(key))
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace gangway
