#include "cli/seed_statistics.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace gangway {

double student_t_975(int degrees_of_freedom) {
  static constexpr std::array<double, 30> kQuantiles = {
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (degrees_of_freedom < 1) return kQuantiles[0];
  if (degrees_of_freedom <= static_cast<int>(kQuantiles.size())) {
    return kQuantiles[static_cast<size_t>(degrees_of_freedom - 1)];
  }
  return 1.960;
}

std::optional<SeedSpread> spread_of(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  SeedSpread spread;
  spread.samples = static_cast<int>(values.size());
  double sum = 0;
  for (const double v : values) sum += v;
  spread.mean = sum / static_cast<double>(values.size());
  spread.min = *std::min_element(values.begin(), values.end());
  spread.max = *std::max_element(values.begin(), values.end());
  if (values.size() >= 2) {
    double squares = 0;
    for (const double v : values) squares += (v - spread.mean) * (v - spread.mean);
    spread.stdev = std::sqrt(squares / static_cast<double>(values.size() - 1));
    const double half = student_t_975(spread.samples - 1) * spread.stdev /
                        std::sqrt(static_cast<double>(values.size()));
    spread.ci_low = spread.mean - half;
    spread.ci_high = spread.mean + half;
  }
  return spread;
}

}  // namespace gangway
