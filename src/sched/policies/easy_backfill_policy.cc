// easy-backfill: classic EASY backfilling at request level (as in Slurm and Maui), with the
// output-length predictor standing in for user runtime estimates. Requests start in one global
// order (the queues' own: arrival_order_gang_policy.h); when the first waiting request is a large
// one, it gets a reservation at the shadow time (when every GPU is predicted to have drained its
// small requests), and later small requests may still start if they are predicted (mean length)
// to end before it. No arbiter, no deadlines, no eviction of stragglers: the baseline that shows
// what the predictor alone buys.

#include "sched/policies/arrival_order_gang_policy.h"
#include "sched/policies/backfill_planner.h"
#include "sched/policies/policy_factories.h"

namespace gangway {

namespace {

class EasyBackfillPolicy final : public ArrivalOrderGangPolicy {
 public:
  EasyBackfillPolicy() : planner_(/*conservative=*/false) {}

  std::string_view name() const override { return "easy-backfill"; }

  void plan(const SchedulerView& state, Time now) override { planner_.refresh(state, now); }

  bool admit_small(const SchedulerView& state, const Replica& replica, const Sequence& seq,
                   Time now) override {
    if (state.gang().phase == GangPhase::kActive) return false;
    if (ahead_of_large_queue(state, seq)) return true;
    // The head's reservation is fixed when the gang is wanted, as in EASY: backfill must not
    // move it later bit by bit.
    return state.gang().phase == GangPhase::kPending && now < reservation_ &&
           planner_.ends_by(state, replica, seq, now, reservation_);
  }
  void on_gang_pending(const SchedulerView& state, Time now) override {
    planner_.refresh(state, now);
    reservation_ = planner_.shadow_time(now);
  }
  void on_iteration_finished(const SchedulerView&, const IterationLaunch& launch, Time) override {
    if (!launch.engine.gang) planner_.invalidate(launch.engine.gpu);
  }
  void on_gang_started(const SchedulerView&, Time now) override {
    backfill_stats_.record(reservation_, now);
  }
  BackfillStats backfill_stats() const override { return backfill_stats_; }

 private:
  BackfillPlanner planner_;
  Time reservation_;
  BackfillStats backfill_stats_;
};

}  // namespace

std::unique_ptr<GangPolicy> make_easy_backfill_policy(const PolicySpec&) {
  return std::make_unique<EasyBackfillPolicy>();
}

}  // namespace gangway
