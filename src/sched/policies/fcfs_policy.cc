// fcfs: one global first-come-first-served order across both tiers, at request level. A
// large-model request at the head blocks every later request until all eight GPUs are free of
// small-model work, then runs; small requests behind it wait. The simplest correct gang
// scheduler: no starvation, but GPUs idle one by one while the last small requests drain.

#include "sched/policies/policy_factories.h"

namespace gangway {

namespace {

class FcfsPolicy final : public GangPolicy {
 public:
  std::string_view name() const override { return "fcfs"; }
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
  bool admit_small(const SchedulerState& state, const Replica&, const Sequence& seq,
                   Time) override {
    if (!state.large) return true;
    if (state.gang.phase != GangPhase::kOff) return false;
    const RequestQueue& large_queue = state.large->queue;
    return large_queue.empty() ||
           seq.spec.arrival < state.sequence(large_queue.front()).spec.arrival;
  }

 private:
  static bool large_head_is_oldest(const SchedulerState& state) {
    if (state.large->queue.empty()) return false;
    const Time large_arrival = state.sequence(state.large->queue.front()).spec.arrival;
    const std::optional<Time> small = state.oldest_small_queued_arrival();
    return !small || large_arrival <= *small;
  }
};

}  // namespace

std::unique_ptr<GangPolicy> make_fcfs_policy(const PolicySpec&) {
  return std::make_unique<FcfsPolicy>();
}

}  // namespace gangway
