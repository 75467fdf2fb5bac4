// time-slice: fixed alternating windows with no feedback. Time is cut into cycles of
// slice_period; the first slice_large_share of each cycle belongs to the large model (a gang
// lease, small sequences paused in place), the rest to the small models. A large request that
// arrives in the small window waits for the next large window whatever the queues look like;
// when the large model has nothing to do in its window the small models may use the GPUs.

#include "sched/policies/policy_factories.h"

namespace gangway {

namespace {

class TimeSlicePolicy final : public GangPolicy {
 public:
  explicit TimeSlicePolicy(const PolicySpec& spec)
      : period_ns_(spec.slice_period.count()),
        large_window_ns_(static_cast<int64_t>(spec.slice_large_share *
                                              static_cast<double>(spec.slice_period.count()))) {}

  std::string_view name() const override { return "time-slice"; }
  ExecutionMode mode() const override { return ExecutionMode::kLease; }

  bool want_gang(const SchedulerView&, Time now) override { return in_large_window(now); }
  bool keep_gang(const SchedulerView&, Time now) override { return in_large_window(now); }
  Time next_wakeup(const SchedulerView& state, Time now) const override {
    if (!state.has_large_work()) return Time::max();
    const int64_t cycle_start = now.ns() - now.ns() % period_ns_;
    const int64_t offset = now.ns() - cycle_start;
    const int64_t next =
        offset < large_window_ns_ ? cycle_start + large_window_ns_ : cycle_start + period_ns_;
    return Time::from_ns(next);
  }

 private:
  bool in_large_window(Time now) const { return now.ns() % period_ns_ < large_window_ns_; }

  int64_t period_ns_;
  int64_t large_window_ns_;
};

}  // namespace

std::unique_ptr<GangPolicy> make_time_slice_policy(const PolicySpec& spec) {
  return std::make_unique<TimeSlicePolicy>(spec);
}

}  // namespace gangway
