#include "metrics/streaming_histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gangway {

StreamingHistogram::StreamingHistogram()
    : bucket_counts_(kBucketCount, 0),
      min_(std::numeric_limits<double>::infinity()),
      max_(-std::numeric_limits<double>::infinity()) {}

void StreamingHistogram::merge(const StreamingHistogram& other) {
  for (int i = 0; i < kBucketCount; ++i) bucket_counts_[i] += other.bucket_counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double StreamingHistogram::mean() const {
  return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_);
}

double StreamingHistogram::bucket_midpoint(int index) {
  if (index <= 0) return 0.0;
  const int octave = (index - 1) / kSubBuckets;
  const int sub_bucket = (index - 1) % kSubBuckets;
  const double mantissa = 1.0 + (static_cast<double>(sub_bucket) + 0.5) / kSubBuckets;
  return std::ldexp(mantissa, kMinExponent + octave);
}

double StreamingHistogram::quantile(double q) const {
  if (count_ == 0) return 0.0;
  if (!(q > 0.0)) return min_;  // also NaN
  if (q >= 1.0) return max_;
  // Nearest rank: the smallest value with at least ceil(q * n) values at or below it.
  const double exact_rank = std::ceil(q * static_cast<double>(count_));
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(exact_rank));
  uint64_t seen = 0;
  for (int i = 0; i < kBucketCount; ++i) {
    seen += bucket_counts_[i];
    if (seen >= rank) return std::clamp(bucket_midpoint(i), min_, max_);
  }
  return max_;  // unreachable: the counts sum to count_
}

}  // namespace gangway
