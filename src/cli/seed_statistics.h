// Mean and spread of one figure over several seeds: what `--seeds` reports, so that a difference
// between two runs can be told from seed-to-seed noise.
#pragma once

#include <optional>
#include <vector>

namespace gangway {

struct SeedSpread {
  int samples = 0;
  double mean = 0;
  double stdev = 0;  // sample standard deviation (0 with one sample)
  double min = 0;
  double max = 0;
  // The 95 % confidence interval of the mean (Student's t); absent with fewer than two samples.
  std::optional<double> ci_low;
  std::optional<double> ci_high;
  std::optional<double> half_width() const {
    if (!ci_low || !ci_high) return std::nullopt;
    return (*ci_high - *ci_low) / 2;
  }
};

// Absent when `values` is empty.
std::optional<SeedSpread> spread_of(const std::vector<double>& values);

// The two-sided 95 % quantile of Student's t with this many degrees of freedom (>= 1).
double student_t_975(int degrees_of_freedom);

}  // namespace gangway
