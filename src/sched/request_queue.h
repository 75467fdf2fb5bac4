// A queue of waiting sequences ordered by a key the policy chooses (arrival time for FCFS, a
// deadline for earliest-deadline-first), ties broken by insertion order, with removal from the
// middle (cancellation, work stealing) in O(log n). Holds handles only; the Sequence keeps its
// own key so that removal needs nothing but the handle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "sched/sequence.h"

namespace gangway {

class RequestQueue {
 public:
  // `cached_tokens`: of the sequence's remaining prompt, what the caches of the engine it is
  // queued for already hold (it will be a hit, not prefill work); 0 for a queue shared by
  // several engines.
  void push(SequenceHandle handle, Sequence& seq, int64_t key, int32_t cached_tokens = 0);
  // REQUIRES: the sequence is in this queue.
  void erase(SequenceHandle handle, const Sequence& seq);
  bool contains(SequenceHandle handle, const Sequence& seq) const;

  bool empty() const { return entries_.empty(); }
  // Prefill tokens still to compute for everything queued (the work ahead of a newcomer), net
  // of the prefixes cached where each is queued.
  int64_t queued_tokens() const { return queued_tokens_; }
  // The same, of one SLO class only: admission counts the work that would be served before a
  // newcomer, which under least-slack order is that of classes with targets as tight as its.
  int64_t queued_tokens(SloClassId slo_class) const {
    return slo_class.value() < tokens_by_class_.size() ? tokens_by_class_[slo_class.value()] : 0;
  }
  size_t size() const { return entries_.size(); }
  SequenceHandle front() const { return std::get<2>(*entries_.begin()); }
  int64_t front_key() const { return std::get<0>(*entries_.begin()); }

  // Iteration in queue order, for policies that look past the head (backfill).
  using Entry = std::tuple<int64_t, uint64_t, SequenceHandle>;
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }

 private:
  std::set<Entry> entries_;
  int64_t queued_tokens_ = 0;
  std::vector<int64_t> tokens_by_class_;  // by SloClassId value; grows to the classes seen
  uint64_t next_sequence_ = 0;
};

}  // namespace gangway
