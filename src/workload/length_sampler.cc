#include "workload/length_sampler.h"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace gangway {

double lognormal_max_p99_over_mean() {
  return portable::exp(kNormalQuantile99 * kNormalQuantile99 / 2.0);
}

LognormalParams lognormal_from_mean_p99(double mean, double p99) {
  const double z = kNormalQuantile99;
  const double discriminant = z * z - 2.0 * portable::log(p99 / mean);
  if (!(mean > 0.0) || !(p99 > mean) || !(discriminant >= 0.0)) {
    throw std::invalid_argument("lognormal_from_mean_p99: need mean < p99 < 14.97 mean");
  }
  LognormalParams params;
  params.sigma = z - std::sqrt(discriminant);
  params.mu = portable::log(mean) - params.sigma * params.sigma / 2.0;
  return params;
}

LengthSampler::LengthSampler(LengthSpec spec) : spec_(std::move(spec)) {
  validate(spec_, "", "length");
  if (spec_.kind == LengthSpec::Kind::geometric && spec_.mean > 1.0) {
    geometric_log_q_ = portable::log(1.0 - 1.0 / spec_.mean);
  }
  if (spec_.kind == LengthSpec::Kind::lognormal) {
    lognormal_ = lognormal_from_mean_p99(spec_.mean, spec_.p99);
  }
}

int32_t LengthSampler::clamp(double tokens) const {
  if (!(tokens > spec_.min)) return spec_.min;  // also NaN
  if (tokens >= spec_.max) return spec_.max;
  return static_cast<int32_t>(tokens);
}

int32_t LengthSampler::sample(Rng& rng) const {
  switch (spec_.kind) {
    case LengthSpec::Kind::constant:
      return clamp(spec_.value);
    case LengthSpec::Kind::geometric: {
      if (geometric_log_q_ == 0.0) return clamp(1.0);
      // Inversion: L = 1 + floor(log(U) / log(1-p)) with U uniform on (0, 1].
      const double k = 1.0 + std::floor(portable::log(rng.uniform_open01()) / geometric_log_q_);
      return clamp(k);
    }
    case LengthSpec::Kind::lognormal:
      return clamp(std::floor(rng.lognormal(lognormal_.mu, lognormal_.sigma) + 0.5));
    case LengthSpec::Kind::empirical:
      return clamp(spec_.values[rng.uniform_int(spec_.values.size())]);
  }
  return spec_.min;
}

}  // namespace gangway
