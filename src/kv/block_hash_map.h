// A hash map from 64-bit keys (KV block hashes) to 32-bit values (block or entry ids), for the
// prefix indexes. The indexes sit on the scheduler's decision path (every routing decision looks
// a prompt up in eight of them, every computed prompt block is published to one), so this is a
// flat open-addressing table with linear probing and backward-shift deletion: no node
// allocation, no tombstones, one or two cache lines per lookup. std::unordered_map costs an
// allocation per insert and a pointer chase per probe.
//
// Keys are arbitrary 64-bit words (block hashes are already well mixed; they are multiplied by a
// Fibonacci constant anyway, so structured keys spread too). The table doubles when it is half
// full; a pool's index is reserved for the pool's capacity up front and never grows.
#pragma once

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
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.value == kAbsent) return kAbsent;
      if (slot.key == key) return slot.value;
    }
  }
  bool contains(uint64_t key) const { return find(key) != kAbsent; }

  // Inserts or overwrites. REQUIRES: value != kAbsent.
  void insert(uint64_t key, uint32_t value) {
    if (2 * (size_ + 1) > slots_.size()) rehash(2 * slots_.size());
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.value == kAbsent) {
        slot = Slot{key, value};
        ++size_;
        return;
      }
      if (slot.key == key) {
        slot.value = value;
        return;
      }
    }
  }

  // Removes `key`; false if it was not there.
  bool erase(uint64_t key) {
    size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].value == kAbsent) return false;
      if (slots_[i].key == key) break;
    }
    // Backward shift: pull later entries of the probe run into the hole when their home allows.
    size_t hole = i;
    for (size_t j = (hole + 1) & mask_; slots_[j].value != kAbsent; j = (j + 1) & mask_) {
      const size_t wanted = home(slots_[j].key);
      // Entry j may move to `hole` if its home is not in the cyclic range (hole, j].
      const bool home_after_hole = ((j - wanted) & mask_) < ((j - hole) & mask_);
      if (!home_after_hole) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].value = kAbsent;
    --size_;
    return true;
  }

  void clear() {
    for (Slot& slot : slots_) slot.value = kAbsent;
    size_ = 0;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t value = kAbsent;
  };

  size_t home(uint64_t key) const {
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift_);
  }

  void rehash(size_t slots) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(slots, Slot{});
    mask_ = slots - 1;
    shift_ = 64;
    for (size_t s = slots; s > 1; s >>= 1) --shift_;
    size_ = 0;
    for (const Slot& slot : old) {
      if (slot.value != kAbsent) insert(slot.key, slot.value);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace gangway
