#include "sched/admission/admission_controller.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace gangway {

namespace {

// A pressure sample older than this no longer speaks for its model (it had no arrivals).
constexpr Duration kPressureSampleLife = std::chrono::seconds(1);
// A shed request is told to come back after about one ladder dwell: the ladder cannot step
// down sooner.
constexpr Duration kMinRetryAfter = std::chrono::seconds(1);
constexpr double kCorrectionHalfLife_s = 1.0;
// The share of admitted requests whose first token may come after their target, and the step of
// the correction that keeps them to it, as a share of the class's target.
constexpr double kPromiseQuantile = 0.99;
constexpr double kCorrectionStep = 0.005;

}  // namespace

AdmissionController::AdmissionController(const NodeSpec& node, AdmissionOptions options)
    : node_(&node),
      options_(std::move(options)),
      ladder_(options_.ladder),
      weight_shift_(options_.weight_shift) {
  counters_.weight_shift = weight_shift_.report();
  for (const RateLimit& rule : options_.rate_limits) {
    const auto bucket = [&](double rate) {
      return rate > 0 ? TokenBucket(rate, std::max(1.0, rate * rule.burst_s)) : TokenBucket();
    };
    request_buckets_.push_back(bucket(rule.requests_per_s));
    token_buckets_.push_back(bucket(rule.tokens_per_s));
  }
  samples_.resize(node.models.size());
  corrections_.resize(node.models.size() * node.slo_classes.size());
  std::set<int> ranks;
  bool any_target = false;
  for (const SloClass& slo : node.slo_classes) {
    ranks.insert(slo.rank);
    if (slo.ttft_target && (!any_target || *slo.ttft_target < tightest_target_)) {
      tightest_target_ = *slo.ttft_target;
      any_target = true;
    }
  }
  lowest_rank_ = *ranks.begin();
  highest_rank_ = *ranks.rbegin();
  second_lowest_rank_ = ranks.size() > 1 ? *std::next(ranks.begin()) : lowest_rank_;
}

bool AdmissionController::sheds(SloClassId slo_class) const {
  const SloClass& slo = node_->slo_class(slo_class);
  if (!options_.enabled || !slo.sheddable) return false;
  const OverloadLevel level = ladder_.level();
  // Rung shed_batch sheds the least important classes; shed_standard everything but the most
  // important. The most important class is never shed wholesale: at shed_interactive only its
  // requests predicted to miss are turned away (decide()).
  if (level >= OverloadLevel::kShedStandard) return slo.rank != lowest_rank_;
  if (level >= OverloadLevel::kShedBatch) {
    return slo.rank == highest_rank_ && highest_rank_ != lowest_rank_;
  }
  return false;
}

bool AdmissionController::defers(SloClassId slo_class) const {
  return options_.enabled && ladder_.at_least(OverloadLevel::kDeferBatch) &&
         highest_rank_ != lowest_rank_ && rank_of(slo_class) == highest_rank_;
}

Duration AdmissionController::rate_limit_wait(const RequestSpec& spec, double tokens, Time now) {
  Duration wait{0};
  for (size_t i = 0; i < options_.rate_limits.size(); ++i) {
    const RateLimit& rule = options_.rate_limits[i];
    if (rule.tenant && *rule.tenant != spec.tenant) continue;
    if (rule.slo_class && *rule.slo_class != spec.slo_class) continue;
    if (rule.requests_per_s > 0) wait = std::max(wait, request_buckets_[i].wait_for(1.0, now));
    if (rule.tokens_per_s > 0) wait = std::max(wait, token_buckets_[i].wait_for(tokens, now));
  }
  return wait;
}

AdmissionVerdict AdmissionController::reject(Reason reason, std::optional<Duration> retry_after,
                                             const RequestSpec& spec) {
  AdmissionVerdict verdict;
  verdict.reason = reason;
  verdict.slo_class = spec.slo_class;
  verdict.max_tokens = spec.max_tokens;
  if (retry_after) verdict.retry_after = std::max(*retry_after, kMinRetryAfter);
  ++counters_.decisions[static_cast<int>(reason)];
  return verdict;
}

std::optional<AdmissionVerdict> AdmissionController::screen(const RequestSpec& spec, Time now) {
  const double tokens = static_cast<double>(spec.prompt_tokens) + spec.max_tokens;
  const Duration limited = rate_limit_wait(spec, tokens, now);
  if (limited > Duration(0)) return reject(Reason::kRateLimited, limited, spec);
  return std::nullopt;
}

AdmissionVerdict AdmissionController::decide(const RequestSpec& spec, const AdmissionQuery& query,
                                             Time now) {
  if (query.no_capacity) return reject(Reason::kNoCapacity, std::nullopt, spec);
  // Rate limits first: the cheapest check, and a tenant over its limit is told so whatever the
  // node's load.
  const double tokens = static_cast<double>(spec.prompt_tokens) + spec.max_tokens;
  const Duration limited = rate_limit_wait(spec, tokens, now);
  if (limited > Duration(0)) return reject(Reason::kRateLimited, limited, spec);

  AdmissionVerdict verdict;
  verdict.slo_class = spec.slo_class;
  verdict.max_tokens = spec.max_tokens;
  if (options_.enabled) {
    if (sheds(verdict.slo_class)) return reject(Reason::kShed, kMinRetryAfter, spec);
    const SloClass& slo = node_->slo_class(verdict.slo_class);
    std::optional<Duration> target = slo.ttft_target;
    if (spec.ttft_deadline) {
      const Duration own = *spec.ttft_deadline - spec.arrival;
      target = target ? std::min(*target, own) : own;
    }
    // A class with a TPOT target is promised its decode pace too: an arrival the gang cannot
    // pace is a predicted miss as a late first token is.
    const bool late_first_token = target && query.predicted_ttft > *target;
    const bool pace_short = slo.tpot_target && query.pace_retry_after;
    if (late_first_token || pace_short) {
      Duration late = late_first_token ? query.predicted_ttft - *target : Duration(0);
      if (pace_short) late = std::max(late, *query.pace_retry_after);
      const bool last_rung = ladder_.at_least(OverloadLevel::kShedInteractive);
      MissAction action = slo.on_predicted_miss;
      if (action == MissAction::kDowngrade && !slo.downgrade_to) action = MissAction::kReject;
      if (last_rung && slo.sheddable) action = MissAction::kReject;
      switch (action) {
        case MissAction::kReject:
          if (late_first_token && query.idle_ttft > *target) {
            return reject(Reason::kDeadlineNeverMeetable, std::nullopt, spec);
          }
          return reject(Reason::kDeadlineUnmeetable, late, spec);
        case MissAction::kDowngrade:
          verdict.slo_class = *slo.downgrade_to;
          if (sheds(verdict.slo_class)) return reject(Reason::kShed, kMinRetryAfter, spec);
          ++counters_.downgraded;
          break;
        case MissAction::kBestEffort:
          verdict.best_effort = true;
          ++counters_.best_effort;
          break;
      }
    }
    if (ladder_.at_least(OverloadLevel::kCapBatchTokens) && least_important(verdict.slo_class) &&
        highest_rank_ != lowest_rank_ && verdict.max_tokens > options_.capped_max_tokens) {
      verdict.max_tokens = options_.capped_max_tokens;
      ++counters_.capped_max_tokens;
    }
  }
  if (query.queued_same_class >= options_.queue_cap) {
    return reject(Reason::kQueueFull, std::max(query.predicted_wait, kMinRetryAfter), spec);
  }
  // Admitted: take from every matching bucket.
  for (size_t i = 0; i < options_.rate_limits.size(); ++i) {
    const RateLimit& rule = options_.rate_limits[i];
    if (rule.tenant && *rule.tenant != spec.tenant) continue;
    if (rule.slo_class && *rule.slo_class != spec.slo_class) continue;
    if (rule.requests_per_s > 0) request_buckets_[i].try_take(1.0, now);
    if (rule.tokens_per_s > 0)
      token_buckets_[i].try_take(std::min(tokens, token_buckets_[i].burst()), now);
  }
  verdict.admit = true;
  ++counters_.decisions[static_cast<int>(Reason::kNone)];
  return verdict;
}

bool AdmissionController::observe_pressure(ModelId model, double pressure, Time now) {
  if (!options_.enabled) return false;
  samples_[model.value()] = PressureSample{pressure, now, true};
  latest_sample_ = now;
  double node_pressure = 0;
  for (const PressureSample& sample : samples_) {
    if (sample.seen && now - sample.at <= kPressureSampleLife) {
      node_pressure = std::max(node_pressure, sample.pressure);
    }
  }
  pressure_ = node_pressure;
  return ladder_.update(node_pressure, now);
}

bool AdmissionController::refresh_pressure(Time now) {
  if (!options_.enabled || ladder_.level() == OverloadLevel::kNormal ||
      now - latest_sample_ <= kPressureSampleLife) {
    return false;
  }
  pressure_ = 0;
  // With no dwell the ladder steps down every rung at once rather than one per wakeup.
  bool changed = false;
  while (ladder_.update(0, now)) changed = true;
  return changed;
}

Time AdmissionController::next_pressure_refresh(Time now) const {
  if (!options_.enabled || ladder_.level() == OverloadLevel::kNormal) return Time::max();
  const Time samples_expire = latest_sample_ + kPressureSampleLife + Duration(1);
  return std::max({now, samples_expire, ladder_.next_step_down(now)});
}

void AdmissionController::note_slo_outcome(SloClassId slo_class, bool large, bool on_time,
                                           Time now) {
  if (!options_.enabled || !options_.weight_shift.enabled || !most_important(slo_class)) return;
  weight_shift_.note_outcome(large, on_time, now);
}

bool AdmissionController::update_weight_shift(Time now) {
  if (!options_.enabled || !options_.weight_shift.enabled) return false;
  const bool changed =
      weight_shift_.update(now, ladder_.at_least(options_.weight_shift.from_level));
  counters_.weight_shift = weight_shift_.report();
  return changed;
}

Duration AdmissionController::correction(ModelId model, SloClassId slo_class, Time now) const {
  const Correction& c = corrections_[correction_index(model, slo_class)];
  if (c.seconds <= 0) return Duration(0);
  const double age_s = now > c.at ? to_seconds(now - c.at) : 0.0;
  return seconds_to_duration(c.seconds * std::exp2(-age_s / kCorrectionHalfLife_s));
}

void AdmissionController::note_prediction(ModelId model, SloClassId slo_class, Duration predicted,
                                          Duration actual, std::optional<bool> promise_kept,
                                          Time now) {
  Correction& c = corrections_[correction_index(model, slo_class)];
  // Bounded by the class's own target for promises, else by half the tightest target: a
  // correction larger than that would turn away everything after one bad spell, and admission
  // would stop learning (docs/overload.md). Either way the fade lets the class be measured
  // again.
  const double limit_s =
      promise_kept ? correction_limit_s(slo_class) : 0.5 * to_seconds(tightest_target_);
  const double current = to_seconds(correction(model, slo_class, now));
  if (promise_kept) {
    // A promise: the correction is the margin that keeps all but one admitted request in a
    // hundred within its SLO. Each promise broken raises it by kPromiseQuantile steps, each one
    // kept lowers it by 1 - kPromiseQuantile, so it settles where that share of the admitted
    // requests miss (stochastic quantile estimation). Predictions that are merely low but
    // still on time (a standard request's wait) cost no margin: only broken promises do.
    const double step_s = kCorrectionStep * limit_s;
    c.seconds = !*promise_kept ? current + step_s * kPromiseQuantile
                               : current - step_s * (1.0 - kPromiseQuantile);
  } else {
    // No promise to keep (no target, or admission.keep_promises off): the smoothed error, weight
    // 1/32 on the newest, measured against the corrected prediction so that it converges to the
    // remaining bias.
    c.seconds = current + to_seconds(actual - predicted) / 32;
  }
  c.seconds = std::clamp(c.seconds, 0.0, limit_s);
  c.at = now;
  ++counters_.predictions;
  const double error_ms = to_ms(actual - predicted);
  counters_.prediction_error_ms_sum += error_ms;
  counters_.prediction_abs_error_ms_sum += std::abs(error_ms);
}

double AdmissionController::correction_limit_s(SloClassId slo_class) const {
  const std::optional<Duration>& target = node_->slo_class(slo_class).ttft_target;
  return to_seconds(target ? *target : tightest_target_ / 2);
}

}  // namespace gangway
