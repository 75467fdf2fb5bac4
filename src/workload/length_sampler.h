// Draws token counts (prompt and output lengths) from a LengthSpec.
//
// Only our own Rng and portable math are used, so a seed gives the same lengths everywhere.
#pragma once

#include <cstdint>

#include "workload/rng.h"
#include "workload/workload_spec.h"

namespace gangway {

// The standard normal's 99th percentile, as the lognormal fit uses it.
inline constexpr double kNormalQuantile99 = 2.326348;

// The largest p99/mean a lognormal can have: exp(z^2/2) = 14.968 (sigma = z there).
double lognormal_max_p99_over_mean();

struct LognormalParams {
  double mu = 0.0;
  double sigma = 0.0;
};

// The lognormal with the given mean and 99th percentile: mean = exp(mu + sigma^2/2),
// p99 = exp(mu + z sigma), so sigma is the smaller root of sigma^2 - 2 z sigma +
// 2 ln(p99/mean) = 0 (the larger root gives a distribution whose mass sits far out in the tail).
// Requires mean < p99 < mean * lognormal_max_p99_over_mean().
LognormalParams lognormal_from_mean_p99(double mean, double p99);

class LengthSampler {
 public:
  // Throws InputError (key "length") for a spec that validate() rejects.
  explicit LengthSampler(LengthSpec spec);

  // A length in [spec.min, spec.max].
  int32_t sample(Rng& rng) const;

  const LengthSpec& spec() const { return spec_; }
  const LognormalParams& lognormal() const { return lognormal_; }

 private:
  int32_t clamp(double tokens) const;

  LengthSpec spec_;
  double geometric_log_q_ = 0.0;  // log(1 - 1/mean)
  LognormalParams lognormal_;
};

}  // namespace gangway
