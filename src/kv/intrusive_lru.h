// A least-recently-used order over the elements of a vector, linked through two fields of the
// elements themselves (`lru_prev` and `lru_next`, indices into the same vector), so that moving
// an element costs no allocation and no search. The cached blocks of a BlockPool and the kept
// blocks of the HostKvTier are each one such list. The list holds only its two ends; the vector
// is passed to every call that follows or changes links.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace gangway {

class IntrusiveLru {
 public:
  // The index that marks "no element" in the links and at the ends of an empty list.
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

  uint32_t oldest() const { return oldest_; }
  uint32_t newest() const { return newest_; }
  bool empty() const { return oldest_ == kNone; }

  // Makes `element` the most recently used. REQUIRES: it is not in the list.
  template <typename Element>
  void append(std::vector<Element>& elements, uint32_t element) {
    Element& e = elements[element];
    e.lru_prev = newest_;
    e.lru_next = kNone;
    if (newest_ != kNone) {
      elements[newest_].lru_next = element;
    } else {
      oldest_ = element;
    }
    newest_ = element;
  }

  // Takes `element` out of the list and clears its links. REQUIRES: it is in the list.
  template <typename Element>
  void remove(std::vector<Element>& elements, uint32_t element) {
    Element& e = elements[element];
    if (e.lru_prev != kNone) {
      elements[e.lru_prev].lru_next = e.lru_next;
    } else {
      oldest_ = e.lru_next;
    }
    if (e.lru_next != kNone) {
      elements[e.lru_next].lru_prev = e.lru_prev;
    } else {
      newest_ = e.lru_prev;
    }
    e.lru_prev = kNone;
    e.lru_next = kNone;
  }

 private:
  uint32_t oldest_ = kNone;
  uint32_t newest_ = kNone;
};

}  // namespace gangway
