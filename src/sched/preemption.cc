// Taking a resident sequence off its engine: its KV is dropped and it goes back to the front of
// its queue (its queue key is unchanged, so it stays ahead of younger requests) to be recomputed
// later as one longer prefill of its prompt plus what it had generated. Used when KV memory runs
// out and when an exclusive-mode gang must not wait any longer for small requests to drain.

#include <algorithm>

#include "sched/scheduler.h"

namespace gangway {

void Scheduler::preempt(SequenceHandle handle, Time now) {
  (void)now;
  Sequence& seq = state_.sequences[handle];
  std::vector<SequenceHandle>& running =
      seq.large ? state_.large->running : state_.replicas[seq.running_replica].running;
  running.erase(std::find(running.begin(), running.end(), handle));
  release_kv(seq, pool_of(seq));
  count_transition(seq, SequenceState::kRunning, SequenceState::kFinished);
  seq.prefill_target_tokens = seq.spec.prompt_tokens + seq.generated_tokens;
  seq.kv_tokens = 0;
  seq.cached_prompt_tokens = 0;
  ++seq.preemptions;
  seq.state = SequenceState::kQueued;
  count_transition(seq, SequenceState::kFinished, SequenceState::kQueued);
  if (seq.large) {
    state_.large->queue.push(handle, seq, seq.queue_key);
  } else {
    const uint32_t replica = seq.running_replica;
    seq.running_replica = kNoReplica;
    seq.queued_replica = replica;
    state_.replicas[replica].queue.push(handle, seq, seq.queue_key);
  }
}

void Scheduler::preempt_resident_small(GpuRuntime& gpu, Time now) {
  for (uint32_t index : gpu.replicas) {
    Replica& replica = state_.replicas[index];
    while (!replica.running.empty()) preempt(replica.running.back(), now);
  }
}

}  // namespace gangway
