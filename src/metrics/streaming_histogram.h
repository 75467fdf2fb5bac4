// A constant-memory histogram of non-negative doubles with quantiles accurate to well under 1 %.
//
// Why: the simulator records a latency for every request (millions per run) and must keep memory
// constant in the number of requests, so no sample vector. Like HdrHistogram, values fall into
// log-linear buckets: each power of two is split into kSubBuckets equal slices, so a bucket is at
// most 1/kSubBuckets (0.78 %) of its lower edge wide and the bucket midpoint that quantile()
// reports is within 0.4 % of any value in the bucket. The bucket comes straight from the IEEE-754
// exponent and the top mantissa bits (no std::log), so record() is a few instructions and never
// allocates; all memory is allocated once, in the constructor.
//
// Range: values in [2^kMinExponent, 2^(kMaxExponent+1)) (about 9.5e-7 .. 1.7e10) are bucketed;
// smaller ones (and 0) go to a zero bucket reported as 0, larger ones to the top bucket. min(),
// max() and mean() are exact whatever the range, and every quantile is clamped to [min, max].
//
// Not thread-safe; one writer. Merge histograms from several threads or runs with merge().
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

namespace gangway {

class StreamingHistogram {
 public:
  static constexpr int kSubBucketBits = 7;
  static constexpr int kSubBuckets = 1 << kSubBucketBits;  // 128 slices per power of two
  static constexpr int kMinExponent = -20;                 // 2^-20 ~ 9.5e-7
  static constexpr int kMaxExponent = 33;                  // top octave [2^33, 2^34) ~ 1.7e10
  static constexpr int kOctaves = kMaxExponent - kMinExponent + 1;
  // Bucket 0 is the zero bucket; then kSubBuckets per octave.
  static constexpr int kBucketCount = 1 + kOctaves * kSubBuckets;

  StreamingHistogram();

  // Negative values and NaN count as 0; +infinity saturates to the largest finite double.
  void record(double value) {
    if (!(value > 0.0)) value = 0.0;
    if (value > kLargestFinite) value = kLargestFinite;
    ++bucket_counts_[bucket_index(value)];
    ++count_;
    sum_ += value;
    if (value < min_) min_ = value;
    if (value > max_) max_ = value;
  }

  // Adds every value recorded in `other`, as if they had been recorded here.
  void merge(const StreamingHistogram& other);

  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  // Exact; 0 when empty.
  double mean() const;
  double min() const { return count_ == 0 ? 0.0 : min_; }
  double max() const { return count_ == 0 ? 0.0 : max_; }

  // The nearest-rank q-quantile: the ceil(q * count)-th smallest value, to within half a bucket
  // (< 0.4 % relative). q is clamped to [0, 1]; q == 0 is exactly min(), q == 1 exactly max();
  // 0 when empty. Walks the buckets, so it costs O(kBucketCount): call it for reports, not per
  // event.
  double quantile(double q) const;

  // Bytes held, fixed at construction (for tests and capacity planning).
  static constexpr std::size_t memory_bytes() {
    return sizeof(StreamingHistogram) + kBucketCount * sizeof(uint64_t);
  }

  // The bucket a (clamped, non-negative) value falls in, and the value reported for a bucket.
  static int bucket_index(double value) {
    // value = 1.m * 2^(biased - 1023) for normal doubles; the top kSubBucketBits bits of m pick
    // the slice within the octave. Zero and subnormals have biased == 0 and land in bucket 0.
    const uint64_t bits = std::bit_cast<uint64_t>(value);
    const int biased_exponent = static_cast<int>(bits >> kMantissaBits);
    if (biased_exponent < kMinBiasedExponent) return 0;
    if (biased_exponent > kMaxBiasedExponent) return kBucketCount - 1;
    const int sub_bucket =
        static_cast<int>((bits >> (kMantissaBits - kSubBucketBits)) & (kSubBuckets - 1));
    return 1 + (biased_exponent - kMinBiasedExponent) * kSubBuckets + sub_bucket;
  }
  static double bucket_midpoint(int index);

 private:
  static constexpr double kLargestFinite = std::numeric_limits<double>::max();
  static constexpr int kMantissaBits = 52;
  static constexpr int kExponentBias = 1023;
  static constexpr int kMinBiasedExponent = kMinExponent + kExponentBias;
  static constexpr int kMaxBiasedExponent = kMaxExponent + kExponentBias;

  std::vector<uint64_t> bucket_counts_;  // kBucketCount entries, never resized
  uint64_t count_ = 0;
  double sum_ = 0.0;
  double min_;
  double max_;
};

}  // namespace gangway
