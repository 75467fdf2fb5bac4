// lm-first: as soon as a large-model request waits, no new small-model work starts anywhere;
// the gang starts once resident small requests drain and keeps the GPUs while large requests
// remain. Shows the opposite failure: GPUs idle one at a time while the drain finishes, and
// small-model traffic starves under steady large-model load.

#include "sched/policies/policy_factories.h"

namespace gangway {

namespace {

class LmFirstPolicy final : public GangPolicy {
 public:
  std::string_view name() const override { return "lm-first"; }
  ExecutionMode mode() const override { return ExecutionMode::kExclusive; }

  bool want_gang(const SchedulerView&, Time) override { return true; }
  bool keep_gang(const SchedulerView&, Time) override { return true; }
  bool admit_small(const SchedulerView& state, const Replica&, const Sequence&, Time) override {
    return !state.has_large_work();
  }
};

}  // namespace

std::unique_ptr<GangPolicy> make_lm_first_policy(const PolicySpec&) {
  return std::make_unique<LmFirstPolicy>();
}

}  // namespace gangway
