// sm-first: small models always first. The large model gets the gang only when no small request
// is queued or resident anywhere. Shows starvation: under steady small-model load the large
// model waits for a lull that may never come.

#include "sched/policies/policy_factories.h"

namespace gangway {

namespace {

class SmFirstPolicy final : public GangPolicy {
 public:
  std::string_view name() const override { return "sm-first"; }
  ExecutionMode mode() const override { return ExecutionMode::kExclusive; }

  bool want_gang(const SchedulerView& state, Time) override {
    return !state.any_small_queued() && state.small_resident() == 0;
  }
  bool keep_gang(const SchedulerView& state, Time) override { return !state.any_small_queued(); }
};

}  // namespace

std::unique_ptr<GangPolicy> make_sm_first_policy(const PolicySpec&) {
  return std::make_unique<SmFirstPolicy>();
}

}  // namespace gangway
