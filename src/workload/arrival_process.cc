#include "workload/arrival_process.h"

#include <algorithm>
#include <cmath>

namespace gangway {

ArrivalProcess::ArrivalProcess(const ArrivalSpec& spec, Rng rng) : spec_(spec), rng_(rng) {
  validate(spec_, "", "arrival");
  const double scale = spec_.rate_scale;
  spec_.rate_per_s *= scale;
  spec_.on_rate_per_s *= scale;
  spec_.off_rate_per_s *= scale;
  spec_.start_rate_per_s *= scale;
  spec_.end_rate_per_s *= scale;
  spec_.rate_scale = 1.0;
  if (spec_.kind == ArrivalSpec::Kind::gamma && spec_.cv > 0.0) {
    gamma_shape_ = 1.0 / (spec_.cv * spec_.cv);
  }
  phase_end_s_ = spec_.on_s;
}

std::optional<Time> ArrivalProcess::next() {
  if (exhausted_) return std::nullopt;
  const std::optional<double> t = next_seconds();
  if (!t) {
    exhausted_ = true;
    return std::nullopt;
  }
  now_s_ = *t;
  return seconds_to_time(now_s_);
}

std::optional<double> ArrivalProcess::next_seconds() {
  switch (spec_.kind) {
    case ArrivalSpec::Kind::poisson:
      if (!(spec_.rate_per_s > 0.0)) return std::nullopt;
      return now_s_ + rng_.exponential(spec_.rate_per_s);
    case ArrivalSpec::Kind::gamma: {
      if (!(spec_.rate_per_s > 0.0)) return std::nullopt;
      if (spec_.cv == 0.0) return now_s_ + 1.0 / spec_.rate_per_s;
      // Mean gap shape * scale = 1 / rate.
      return now_s_ + rng_.gamma(gamma_shape_, 1.0 / (spec_.rate_per_s * gamma_shape_));
    }
    case ArrivalSpec::Kind::on_off:
      return next_on_off();
    case ArrivalSpec::Kind::ramp:
      return next_ramp();
  }
  return std::nullopt;
}

std::optional<double> ArrivalProcess::next_on_off() {
  if (!(spec_.on_rate_per_s > 0.0) && !(spec_.off_rate_per_s > 0.0)) return std::nullopt;
  double t = now_s_;
  for (;;) {
    const double rate = in_on_phase_ ? spec_.on_rate_per_s : spec_.off_rate_per_s;
    if (rate > 0.0) {
      const double candidate = t + rng_.exponential(rate);
      if (candidate < phase_end_s_) return candidate;
    }
    t = phase_end_s_;
    in_on_phase_ = !in_on_phase_;
    phase_end_s_ += in_on_phase_ ? spec_.on_s : spec_.off_s;
  }
}

std::optional<double> ArrivalProcess::next_ramp() {
  // Integrated rate to spend: an Exp(1) draw.
  double hazard = -portable::log(rng_.uniform_open01());
  double t = now_s_;
  const double ramp_end = spec_.ramp_s;
  if (t < ramp_end) {
    const double slope = (spec_.end_rate_per_s - spec_.start_rate_per_s) / ramp_end;
    const double rate_now = spec_.start_rate_per_s + slope * t;
    const double left = ramp_end - t;
    const double hazard_in_ramp = rate_now * left + 0.5 * slope * left * left;
    if (hazard < hazard_in_ramp) {
      // Solve rate_now * d + slope * d^2 / 2 = hazard for the smaller root d >= 0, in the form
      // that stays accurate when slope is near zero. The discriminant is >= 0 because the rate
      // stays >= 0 up to ramp_end.
      const double root = std::sqrt(std::max(0.0, rate_now * rate_now + 2.0 * slope * hazard));
      if (!(rate_now + root > 0.0)) return t;  // hazard 0 at a zero rate
      const double d = 2.0 * hazard / (rate_now + root);
      return t + std::min(d, left);
    }
    hazard -= hazard_in_ramp;
    t = ramp_end;
  }
  if (!(spec_.end_rate_per_s > 0.0)) return std::nullopt;
  return t + hazard / spec_.end_rate_per_s;
}

}  // namespace gangway
