// Test-only: a tiny seeded generator (splitmix64) so histogram tests draw the same samples on every
// platform; std:: distributions are implementation-defined and would make expected values drift.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/mix64.h"

namespace gangway::testing {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() { return mix64(state_ += 0x9e3779b97f4a7c15ULL); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double low, double high) { return low + (high - low) * uniform(); }
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }

 private:
  uint64_t state_;
};

}  // namespace gangway::testing
