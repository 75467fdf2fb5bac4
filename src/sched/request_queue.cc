#include "sched/request_queue.h"

#include <algorithm>

namespace gangway {

void RequestQueue::push(SequenceHandle handle, Sequence& seq, int64_t key, int32_t cached_tokens) {
  seq.queue_key = key;
  seq.queue_sequence = next_sequence_++;
  // At least one token: the last prompt token is always computed.
  seq.queue_tokens = std::max(std::min(seq.remaining_prefill_tokens(), 1),
                              seq.remaining_prefill_tokens() - cached_tokens);
  queued_tokens_ += seq.queue_tokens;
  const size_t slo_class = seq.spec.slo_class.value();
  if (slo_class >= tokens_by_class_.size()) tokens_by_class_.resize(slo_class + 1, 0);
  tokens_by_class_[slo_class] += seq.queue_tokens;
  entries_.emplace(key, seq.queue_sequence, handle);
}

void RequestQueue::erase(SequenceHandle handle, const Sequence& seq) {
  if (entries_.erase(Entry(seq.queue_key, seq.queue_sequence, handle)) > 0) {
    queued_tokens_ -= seq.queue_tokens;
    tokens_by_class_[seq.spec.slo_class.value()] -= seq.queue_tokens;
  }
}

bool RequestQueue::contains(SequenceHandle handle, const Sequence& seq) const {
  return entries_.count(Entry(seq.queue_key, seq.queue_sequence, handle)) > 0;
}

}  // namespace gangway
