// The gang half of the request-level baselines that keep one global arrival order (fcfs and
// easy-backfill): the gang is wanted when the oldest waiting request is a large one, and large
// requests keep joining it only while no older small request waits. What the two differ in is
// whether a small request may start ahead of a waiting large one (backfill), which each
// subclass decides in admit_small.
#pragma once

#include <optional>

#include "sched/gang_policy.h"

namespace gangway {

class ArrivalOrderGangPolicy : public GangPolicy {
 public:
  ExecutionMode mode() const override { return ExecutionMode::kExclusive; }

  bool want_gang(const SchedulerState& state, Time) override {
    if (!state.large->running.empty()) return true;
    return large_head_is_oldest(state);
  }
  // Keep admitting large requests while no small request waits ahead of the large queue's head.
  bool keep_gang(const SchedulerState& state, Time) override {
    return !state.any_small_queued() || large_head_is_oldest(state);
  }
  bool admit_large(const SchedulerState& state, const Sequence& seq, Time) override {
    const std::optional<Time> small = state.oldest_small_queued_arrival();
    return !small || seq.spec.arrival <= *small;
  }

 protected:
  static bool large_head_is_oldest(const SchedulerState& state) {
    if (state.large->queue.empty()) return false;
    const Time large_arrival = state.sequence(state.large->queue.front()).spec.arrival;
    const std::optional<Time> small = state.oldest_small_queued_arrival();
    return !small || large_arrival <= *small;
  }
};

}  // namespace gangway
