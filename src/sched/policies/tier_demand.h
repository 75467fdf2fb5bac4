// What each tier needs of the node's time to keep the promises admission made, and the split of
// the node's time between the gang and the small models that follows from it
// (docs/gang-scheduling.md, "The split follows demand").
//
// A tier's demand is a share of the node's time, the sum of two parts:
//  - pace: resident sequences that are decoding with a pace to keep (their class's TPOT target,
//    or the pace owed to classes without one) need an iteration of their batch at least once per
//    tightest pace period among them: one decode iteration's time over that period. A resident
//    large-model sequence with a 50 ms TPOT target needs a gang iteration at least every 50 ms,
//    whatever else the gang does;
//  - prefill: queued prompts (and resident ones still in prefill) must be computed before their
//    first-token deadlines: each class's queued prefill work over its TTFT target (the resident
//    prompts' over the tightest); where the split counts recent prefill, the prefill the tier
//    computed lately per second if that is more; never more than the whole node.
// The small models run on every GPU at once; their demand is the largest of any GPU's.
//
// The split: when both tiers' demands fit in the node (with the switching overhead), each gets
// its demand and the time left over is split by the configured weights. When they do not
// (overload), the resident sequences' paces come first (the promises already made), and the
// rest is split by the weights, a tier's part beyond its demand going to the other. Either way,
// while both tiers have demand the large model's share stays within [large_min, large_max]: the
// operator's floor (the large model's guarantee under overload) and ceiling (the small models').
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/time.h"
#include "sched/iteration.h"
#include "sched/policy_spec.h"
#include "sched/scheduler_view.h"

namespace gangway {

struct TierDemand {
  double pace = 0;     // share of time to keep resident decoding sequences on pace
  double prefill = 0;  // share of time to compute queued prompts by their deadlines
  // The tightest pace period among resident decoding sequences (0: none decoding with one).
  Duration period{0};
  // The decode iteration time that `pace` is based on.
  Duration decode_iteration{0};
  int32_t decoding = 0;  // resident sequences decoding with a pace
  int64_t context = 0;   // their KV tokens, in all
  // A decode iteration of every resident sequence that is decoding (paced or not).
  Duration resident_decode{0};

  double total() const { return pace + prefill; }
  bool any() const { return total() > 0; }
};

struct ShareLimits {
  // The large model's share of the node's time while both tiers have demand: at least
  // large_min (its guarantee), at most large_max (the small models keep the rest).
  double large_min = 0.3;
  double large_max = 0.7;
  // How time neither tier needs for its deadlines is split (large : small).
  double large_weight = 1;
  double small_weight = 6;
  // Share of the node's time lost to barriers while both tiers have demand (each switch to the
  // gang idles GPUs until the last one reaches its iteration boundary).
  double switch_overhead = 0.05;
};

// The limits policy.large_share_min, large_share_max and the tier weights set.
ShareLimits share_limits(const PolicySpec& spec);

struct SharePlan {
  TierDemand large;
  TierDemand small;
  // The large model's target share of the node's time; the small models' is 1 - large_share
  // (less the switching overhead while both have demand).
  double large_share = 0;
  ShareLimits limits;

  bool contended() const { return large.any() && small.any(); }
};

SharePlan plan_shares(const TierDemand& large, const TierDemand& small, const ShareLimits& limits);

// Reads the tiers' demands from the scheduler's state, with per-model constants taken from the
// cost models once. The prefill part counts each class's queued prompt work over its TTFT target
// (a class without one: the no-target deadline), and the prefill work the tier computed lately
// per second, whichever is more: a queue shows a burst, the recent rate a steady load.
class DemandModel {
 public:
  void initialise(const SchedulerView& state, Duration no_target_deadline);
  bool initialised() const { return initialised_; }

  // The pace owed to a resident decoding sequence of this class: its TPOT target, else (for
  // the large model) unpaced_factor times the loosest target any class sets; none for a small
  // model's class without a target.
  std::optional<Duration> pace(const SchedulerView& state, SloClassId slo_class, bool large) const;
  // How long a class's prompts may wait for their first token: its TTFT target, else the
  // no-target deadline.
  Duration horizon(const SchedulerView& state, SloClassId slo_class) const;
  double seconds_per_prefill_token(ModelId model) const {
    return seconds_per_prefill_token_[model.value()];
  }

  // The large model's demand: the pace of its resident decoding sequences and its prefill.
  TierDemand large(const SchedulerView& state, Time now) const;
  // The pace part of one GPU's small models (the prefill part is small_prefill()).
  TierDemand small_pace(const SchedulerView& state, const GpuRuntime& gpu) const;
  // The small models' prefill demand per GPU: the busiest GPU's queued work over its classes'
  // horizons.
  double small_prefill(const SchedulerView& state, Time now) const;

  // A decode iteration of `batch` sequences with `context` KV tokens in all on the model.
  Duration decode_time(const SchedulerView& state, ModelId model, int32_t batch,
                       int64_t context) const;

  // The prefill computed lately, per tier, as seconds of prefill per second of the node's time
  // (the small models': per GPU): fed with every iteration (note_prefill), smoothed over about a
  // second.
  void note_prefill(bool large, ModelId model, int32_t tokens, Time end);
  double recent_prefill(bool large, Time now) const;

  // Resident large sequences of a class without a TPOT target are paced at this multiple of the
  // loosest TPOT target any class sets.
  static constexpr int kUnpacedPaceFactor = 2;
  // kUnpacedPaceFactor times the loosest TPOT target any of the node's classes sets; none if no
  // class sets one.
  static std::optional<Duration> unpaced_pace(const NodeSpec& node);

 private:
  struct Rate {
    double value = 0;  // smoothed seconds of prefill per second
    Time at;
  };
  double decayed(const Rate& rate, Time now) const;

  bool initialised_ = false;
  Duration no_target_deadline_{0};
  std::optional<Duration> unpaced_;
  std::vector<double> seconds_per_prefill_token_;  // by ModelId value: a full chunk, alone
  int gpus_ = 1;
  Rate large_rate_;
  Rate small_rate_;
};

// The demand-driven split as gangway's lease mode uses it (policy.split: demand): at each
// decision it reads both tiers' demands and plans the shares. The small models' pace demand is
// kept per GPU from its last iteration (a pass over its resident sequences, done on first read),
// so a decision costs O(GPUs + SLO classes), not O(resident sequences).
class DemandSplit {
 public:
  // Whether a tier's prefill demand is at least the prefill it computed lately: the decode-pace
  // reservation's budget counts it (work a tier keeps computing is demand even when its queue
  // is short); policy.split: demand counts the queued prefill alone, as its shares and floor
  // were set (docs/decisions/demand-driven-split.md).
  enum class RecentPrefill { kIgnored, kCounted };

  DemandSplit(const ShareLimits& limits, RecentPrefill recent) : limits_(limits), recent_(recent) {}

  void initialise(const SchedulerView& state, Duration no_target_deadline);
  // Plans the shares from the state now; the plan holds until the next call.
  const SharePlan& plan(const SchedulerView& state, Time now);
  const SharePlan& current() const { return plan_; }
  // Whether both tiers' demands, with the switching overhead, fit in the node.
  bool feasible() const {
    return plan_.large.total() + plan_.small.total() + limits_.switch_overhead <= 1.0;
  }
  // Every finished iteration: its prefill feeds the recent rates (where counted), and a small
  // model's iteration invalidates its GPU's pace.
  void on_iteration_finished(const IterationLaunch& launch, Time end);

 private:
  ShareLimits limits_;
  RecentPrefill recent_;
  DemandModel demand_;
  SharePlan plan_;
  // By GPU: the small models' pace demand as of its last iteration (none: not computed yet).
  std::vector<std::optional<TierDemand>> small_pace_;
};

}  // namespace gangway
