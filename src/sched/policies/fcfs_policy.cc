// fcfs: one global first-come-first-served order across both tiers, at request level. A
// large-model request at the head blocks every later request until all eight GPUs are free of
// small-model work, then runs; small requests behind it wait. The simplest correct gang
// scheduler: no starvation, but GPUs idle one by one while the last small requests drain. "First
// come" is the queues' order (arrival_order_gang_policy.h): arrival, or least slack first under
// the scheduler's default slack queue order.

#include "sched/policies/arrival_order_gang_policy.h"
#include "sched/policies/policy_factories.h"

namespace gangway {

namespace {

class FcfsPolicy final : public ArrivalOrderGangPolicy {
 public:
  std::string_view name() const override { return "fcfs"; }

  bool admit_small(const SchedulerView& state, const Replica&, const Sequence& seq, Time) override {
    if (!state.large()) return true;
    if (state.gang().phase != GangPhase::kOff) return false;
    return ahead_of_large_queue(state, seq);
  }
};

}  // namespace

std::unique_ptr<GangPolicy> make_fcfs_policy(const PolicySpec&) {
  return std::make_unique<FcfsPolicy>();
}

}  // namespace gangway
