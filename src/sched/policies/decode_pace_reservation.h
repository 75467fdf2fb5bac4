// The decode-pace reservation of gangway's lease mode (policy.pace_reserve;
// docs/gang-scheduling.md, "Decode-pace reservation"): the share of the node's time the gang
// needs to keep the resident large sequences with a TPOT target on pace, the budget the small
// models' demand leaves it, and whether the first fits in the second. While it does, the paced
// sequences' pace points win over small work due later (the policy's want_gang and keep_gang),
// and admission takes a large arrival with a TPOT target only if the gang can pace it beside
// them. It stands alone because it reads its own demand model (tier_demand.h, the prefill
// computed lately counted) and answers the policy and admission in a few yes-or-no questions.
#pragma once

#include <optional>

#include "core/time.h"
#include "model/cost_model.h"
#include "sched/iteration.h"
#include "sched/policies/tier_demand.h"
#include "sched/scheduler_view.h"

namespace gangway {

// The large model's guaranteed share of the node's time, the pace budget's floor: limits.large_min
// under policy.split: demand (`demand_split`), else its weighted share with `large_weight_factor`
// (the overload ladder's weight shift) on its weight.
double guaranteed_large_share(const ShareLimits& limits, bool demand_split,
                              double large_weight_factor);

// The share of the node's time the gang needs to pace one lone large sequence at `tpot`: its
// shortest iteration (lone_decode_step, `cost` being the large model's) once per target. Where the
// guaranteed share is below it, the reservation takes no large arrival with that target while the
// small models' demand fills the node.
double lone_pace_need(const CostModel& cost, Duration tpot);

class DecodePaceReservation {
 public:
  // `enabled`: policy.pace_reserve in lease mode. `demand_split`: policy.split: demand in lease
  // mode, which makes the large model's guaranteed share limits.large_min rather than its
  // weighted share.
  DecodePaceReservation(bool enabled, bool demand_split, const ShareLimits& limits)
      : enabled_(enabled),
        demand_split_(demand_split),
        limits_(limits),
        demand_(limits, DemandSplit::RecentPrefill::kCounted) {}

  bool enabled() const { return enabled_; }
  // Both do nothing unless enabled: the demand model reads the cost models once, and every
  // finished iteration feeds it.
  void initialise(const SchedulerView& state, Duration no_target_horizon);
  void on_iteration_finished(const IterationLaunch& launch, Time end);

  // Whether the reservation and admission's pace screen act: it is enabled, the node has a
  // large model, and the overload ladder is below its shedding rungs.
  bool reserving(const SchedulerView& state) const;
  // Whether the resident large sequences with a TPOT target are within what the pace budget can
  // pace: then their pace points win over the small models' urgency.
  bool reserved(const SchedulerView& state, Time now);
  // Admission's screen for a large arrival with a TPOT target, while reserving(): none if the
  // gang can pace it beside the resident sequences, else how long until a retry may find room.
  // `large_chunk_time` is a lone prompt chunk's iteration on the large model.
  std::optional<Duration> refusal(const SchedulerView& state, const Sequence& arrival, Time now,
                                  Duration large_chunk_time);

 private:
  double large_pace_need(const SchedulerView& state, const Sequence* arrival,
                         double prefill_tokens_per_s) const;
  double pace_budget(const SchedulerView& state, const SharePlan& plan) const;

  bool enabled_;
  bool demand_split_;
  ShareLimits limits_;
  // The tiers' demands as the pace budget reads them, with the prefill computed lately.
  DemandSplit demand_;
  // How long a refused arrival waits before a retry: the tightest first-token target of any
  // class (the no-target horizon where none sets one).
  Duration retry_after_{0};
};

}  // namespace gangway
