#include "sched/request_queue.h"

namespace gangway {

void RequestQueue::push(SequenceHandle handle, Sequence& seq, int64_t key) {
  seq.queue_key = key;
  seq.queue_sequence = next_sequence_++;
  entries_.emplace(key, seq.queue_sequence, handle);
}

void RequestQueue::erase(SequenceHandle handle, const Sequence& seq) {
  entries_.erase(Entry(seq.queue_key, seq.queue_sequence, handle));
}

bool RequestQueue::contains(SequenceHandle handle, const Sequence& seq) const {
  return entries_.count(Entry(seq.queue_key, seq.queue_sequence, handle)) > 0;
}

}  // namespace gangway
