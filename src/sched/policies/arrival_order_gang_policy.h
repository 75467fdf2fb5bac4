// The gang half of the request-level baselines that keep one global order (fcfs and
// easy-backfill): the gang is wanted when the first waiting request is a large one, and large
// requests keep joining it only while no small request waits ahead of them. The order is the
// queues' own (queue keys compare across queues): arrival order, or least slack first under the
// scheduler's slack queue order. What the two differ in is whether a small request may start
// ahead of a waiting large one (backfill), which each subclass decides in admit_small.
#pragma once

#include <optional>

#include "sched/gang_policy.h"

namespace gangway {

class ArrivalOrderGangPolicy : public GangPolicy {
 public:
  ExecutionMode mode() const override { return ExecutionMode::kExclusive; }

  bool want_gang(const SchedulerView& state, Time) override {
    if (!state.large()->running.empty()) return true;
    return large_head_goes_first(state);
  }
  // Keep admitting large requests while no small request waits ahead of the large queue's head.
  bool keep_gang(const SchedulerView& state, Time) override {
    return !state.any_small_queued() || large_head_goes_first(state);
  }
  bool admit_large(const SchedulerView& state, const Sequence& seq, Time) override {
    const std::optional<int64_t> small = state.smallest_small_queue_key();
    return !small || seq.queue_key <= *small;
  }

 protected:
  static bool large_head_goes_first(const SchedulerView& state) {
    if (state.large()->queue.empty()) return false;
    const std::optional<int64_t> small = state.smallest_small_queue_key();
    return !small || state.large()->queue.front_key() <= *small;
  }
  // Whether a small request goes before every waiting large one.
  static bool ahead_of_large_queue(const SchedulerView& state, const Sequence& seq) {
    const RequestQueue& large_queue = state.large()->queue;
    return large_queue.empty() || seq.queue_key < large_queue.front_key();
  }
};

}  // namespace gangway
