// Admission control: decides at arrival, in constant time, whether the node takes a request,
// in which class and with what max_tokens, or rejects it now with a reason a router can act on
// and a Retry-After. It owns the rate limits (token buckets per tenant and class) and the
// overload ladder; the Scheduler gives it the request's predicted TTFT and the queue depth, so
// this class never looks at sequences or GPUs. Sans-I/O: told the time. docs/overload.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/node_spec.h"
#include "core/outcome.h"
#include "core/request.h"
#include "sched/admission/admission_options.h"
#include "sched/admission/overload_ladder.h"
#include "sched/admission/token_bucket.h"
#include "sched/admission/weight_shift.h"

namespace gangway {

// What the Scheduler knows about an arrival when it asks.
struct AdmissionQuery {
  // TTFT at the best place it could go, and the wait part of it (before its own prefill).
  Duration predicted_ttft{0};
  Duration predicted_wait{0};
  // Its own prefill alone on the best idle engine of this node (with what of its prefix is
  // cached now), no wait, no slowdown: a lower bound of its TTFT here at any load. Over the
  // target, a rejection says "never" rather than "not now".
  Duration idle_ttft{0};
  // Requests of its model and class queued now (not yet started).
  int64_t queued_same_class = 0;
  // The model cannot run on this node now (a GPU of the gang or of every replica is lost).
  bool no_capacity = false;
  // The large model only: the gang cannot keep the decode pace of its class's TPOT target
  // beside the resident sequences within the time it can count on; how long until a retry may
  // find room. None: the pace fits, or nothing was asked.
  std::optional<Duration> pace_retry_after;
};

struct AdmissionVerdict {
  bool admit = false;
  Reason reason = Reason::kNone;        // when rejected
  std::optional<Duration> retry_after;  // when rejected and a retry can succeed
  SloClassId slo_class;                 // the class it is served in (downgrades change it)
  int32_t max_tokens = 0;               // possibly capped by the ladder
  bool best_effort = false;             // admitted although predicted to miss its target
};

// Counters for reports; constant size.
struct AdmissionCounters {
  // Decisions by reason (kNone: admitted).
  std::array<int64_t, kReasonCount> decisions{};
  int64_t downgraded = 0;
  int64_t best_effort = 0;
  int64_t capped_max_tokens = 0;
  // Queued requests dropped because the ladder began shedding their class.
  int64_t shed_from_queue = 0;
  // Predicted TTFT of admitted requests against what they got, for calibration.
  int64_t predictions = 0;
  double prediction_error_ms_sum = 0;  // signed: actual - predicted
  double prediction_abs_error_ms_sum = 0;
  // The ladder's weight shift, as of its last update.
  WeightShiftReport weight_shift;
};

class AdmissionController {
 public:
  AdmissionController(const NodeSpec& node, AdmissionOptions options);

  const AdmissionOptions& options() const { return options_; }
  bool enabled() const { return options_.enabled; }

  AdmissionVerdict decide(const RequestSpec& spec, const AdmissionQuery& query, Time now);
  // The part of decide() that needs no prediction: the rate limits. The Scheduler asks this
  // first, so that a request over its tenant's limit is turned away before any TTFT prediction
  // is spent on it. A rejection (counted) or nothing; decide() checks the same again, for free
  // when this passed.
  std::optional<AdmissionVerdict> screen(const RequestSpec& spec, Time now);

  // A fresh sample of the node's pressure as seen by model `model`: predicted wait over the
  // tightest TTFT target the node serves. Drives the ladder; true when its level changed.
  bool observe_pressure(ModelId model, double pressure, Time now);
  // Without arrivals there are no samples: once every model's sample is older than its life
  // the pressure is zero, and this feeds that to the ladder, which steps down a rung per dwell.
  // (Fed only by arrivals, a ladder left above normal when they stopped stayed there, deferring
  // batch work for good: tests/regressions/.) True when the level changed.
  bool refresh_pressure(Time now);
  // When refresh_pressure() could next change the level; Time::max() at normal or when off.
  Time next_pressure_refresh(Time now) const;
  OverloadLevel level() const { return ladder_.level(); }
  const OverloadLadder& ladder() const { return ladder_; }
  double pressure() const { return pressure_; }

  // The weight shift: a request of `slo_class` on the large model or a small one ended on time or
  // not (rejected as late or busy, or completed off target). Only the most important class
  // counts. update_weight_shift() re-evaluates the factor (true when it changed); the Scheduler
  // publishes it to the gang policy (SchedulerState::overload.large_weight_factor).
  void note_slo_outcome(SloClassId slo_class, bool large, bool on_time, Time now);
  bool update_weight_shift(Time now);
  const WeightShift& weight_shift() const { return weight_shift_; }
  // 1 unless admission and the weight shift are on.
  double large_weight_factor() const { return weight_shift_.factor(); }

  // Whether the ladder currently sheds requests of this class (queued ones are dropped too).
  bool sheds(SloClassId slo_class) const;
  // Whether a sequence of this class waits while others are queued (rung defer_batch).
  bool defers(SloClassId slo_class) const;
  bool most_important(SloClassId slo_class) const { return rank_of(slo_class) == lowest_rank_; }
  bool least_important(SloClassId slo_class) const { return rank_of(slo_class) == highest_rank_; }
  // The tightest TTFT target of any class (the pressure's yardstick).
  Duration tightest_target() const { return tightest_target_; }

  // A request of `slo_class` admitted with `predicted` TTFT got its first token after `actual`;
  // `promise_kept` says, for a request admitted on a promise (a TTFT target, with
  // admission.keep_promises on), whether it met its whole SLO. The result corrects later
  // predictions of that model and class (correction()): the model of the wait is simple (a lease
  // may start while a request waits; engines may run slower than the cost model says), so admission
  // learns the margin its promises need. For promises, the correction tracks the margin at which
  // one admitted request in a hundred misses; otherwise, the smoothed error. Per class, because
  // classes differ: least-slack order serves an interactive newcomer before queued batch work,
  // whose own waits would otherwise inflate every interactive prediction. The correction fades with
  // a half-life of a second without new samples, so that a class whose requests are all being
  // turned away is offered requests again and measured anew.
  void note_prediction(ModelId model, SloClassId slo_class, Duration predicted, Duration actual,
                       std::optional<bool> promise_kept, Time now);
  Duration correction(ModelId model, SloClassId slo_class, Time now) const;
  void note_shed_from_queue() { ++counters_.shed_from_queue; }
  const AdmissionCounters& counters() const { return counters_; }

 private:
  // The largest correction of a class: its TTFT target, or half the tightest without one.
  double correction_limit_s(SloClassId slo_class) const;
  int rank_of(SloClassId slo_class) const { return node_->slo_class(slo_class).rank; }
  // Longest wait any matching bucket needs before `tokens` tokens of this request would pass.
  Duration rate_limit_wait(const RequestSpec& spec, double tokens, Time now);
  AdmissionVerdict reject(Reason reason, std::optional<Duration> retry_after,
                          const RequestSpec& spec);

  const NodeSpec* node_;
  AdmissionOptions options_;
  OverloadLadder ladder_;
  WeightShift weight_shift_;
  // Per rule: requests bucket and tokens bucket (either may be unused: rate zero).
  std::vector<TokenBucket> request_buckets_;
  std::vector<TokenBucket> token_buckets_;
  struct PressureSample {
    double pressure = 0;
    Time at;
    bool seen = false;
  };
  std::vector<PressureSample> samples_;  // by model
  Time latest_sample_;                   // of any model
  struct Correction {
    double seconds = 0;  // a high quantile of actual - predicted TTFT, never negative
    Time at;             // of the last sample
  };
  std::vector<Correction> corrections_;  // by model, then class: model x classes + class
  size_t correction_index(ModelId model, SloClassId slo_class) const {
    return model.value() * node_->slo_classes.size() + slo_class.value();
  }
  double pressure_ = 0;
  int lowest_rank_ = 0;
  int highest_rank_ = 0;
  int second_lowest_rank_ = 0;
  Duration tightest_target_ = std::chrono::milliseconds(200);
  AdmissionCounters counters_;
};

}  // namespace gangway
