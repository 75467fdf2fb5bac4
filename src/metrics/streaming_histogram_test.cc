#include "metrics/streaming_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "metrics/allocation_count_for_tests.h"
#include "metrics/test_random.h"

namespace gangway {
namespace {

using testing::SplitMix64;

// The exact nearest-rank quantile of a sorted sample, the definition quantile() approximates.
double exact_quantile(const std::vector<double>& sorted, double q) {
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::max<std::size_t>(rank, 1) - 1];
}

double relative_error(double approximate, double exact) {
  return std::abs(approximate - exact) / std::abs(exact);
}

// Records `samples` and checks every tested quantile against the exact one.
void expect_quantiles_within_one_percent(std::vector<double> samples) {
  StreamingHistogram histogram;
  for (double value : samples) histogram.record(value);
  std::sort(samples.begin(), samples.end());
  for (double q : {0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999}) {
    const double exact = exact_quantile(samples, q);
    EXPECT_LT(relative_error(histogram.quantile(q), exact), 0.01)
        << "q=" << q << " approx=" << histogram.quantile(q) << " exact=" << exact;
  }
}

TEST(StreamingHistogram, EmptyReportsZeros) {
  const StreamingHistogram histogram;
  EXPECT_EQ(histogram.count(), 0u);
  EXPECT_EQ(histogram.mean(), 0.0);
  EXPECT_EQ(histogram.min(), 0.0);
  EXPECT_EQ(histogram.max(), 0.0);
  EXPECT_EQ(histogram.quantile(0.0), 0.0);
  EXPECT_EQ(histogram.quantile(0.5), 0.0);
  EXPECT_EQ(histogram.quantile(1.0), 0.0);
}

TEST(StreamingHistogram, UniformQuantilesWithinOnePercent) {
  SplitMix64 random(1);
  std::vector<double> samples(200'000);
  for (double& value : samples) value = random.uniform(1.0, 1000.0);
  expect_quantiles_within_one_percent(std::move(samples));
}

TEST(StreamingHistogram, ExponentialQuantilesWithinOnePercent) {
  SplitMix64 random(2);
  std::vector<double> samples(200'000);
  for (double& value : samples) value = random.exponential(50.0);
  expect_quantiles_within_one_percent(std::move(samples));
}

TEST(StreamingHistogram, LogUniformOverTheWholeRangeWithinOnePercent) {
  SplitMix64 random(3);
  std::vector<double> samples(200'000);
  for (double& value : samples) value = std::pow(10.0, random.uniform(-6.0, 9.0));
  expect_quantiles_within_one_percent(std::move(samples));
}

TEST(StreamingHistogram, EveryBucketMidpointIsWithinHalfAPercentOfItsValues) {
  SplitMix64 random(4);
  for (int i = 0; i < 100'000; ++i) {
    const double value = std::pow(10.0, random.uniform(-6.0, 9.5));
    const double midpoint =
        StreamingHistogram::bucket_midpoint(StreamingHistogram::bucket_index(value));
    ASSERT_LT(relative_error(midpoint, value), 0.005) << value;
  }
  // Bucket edges: a power of two starts a new bucket, the value just below it is in the one before.
  const double edge = std::ldexp(1.0, 10);
  EXPECT_EQ(StreamingHistogram::bucket_index(edge),
            StreamingHistogram::bucket_index(std::nextafter(edge, 0.0)) + 1);
}

TEST(StreamingHistogram, MinMaxMeanAreExact) {
  StreamingHistogram histogram;
  for (double value : {3.3, 1.1, 7.7, 2.2}) histogram.record(value);
  EXPECT_EQ(histogram.count(), 4u);
  EXPECT_EQ(histogram.min(), 1.1);
  EXPECT_EQ(histogram.max(), 7.7);
  EXPECT_DOUBLE_EQ(histogram.mean(), (3.3 + 1.1 + 7.7 + 2.2) / 4);
  EXPECT_EQ(histogram.quantile(0.0), 1.1);
  EXPECT_EQ(histogram.quantile(1.0), 7.7);
}

TEST(StreamingHistogram, QuantilesStayWithinMinAndMax) {
  StreamingHistogram histogram;
  for (int i = 0; i < 10; ++i) histogram.record(100.3);
  // The bucket midpoint differs from 100.3, but a quantile can never leave [min, max].
  EXPECT_EQ(histogram.quantile(0.5), 100.3);
  EXPECT_EQ(histogram.quantile(0.99), 100.3);
}

TEST(StreamingHistogram, NearestRankOnASmallSample) {
  StreamingHistogram histogram;
  for (double value : {10.0, 20.0, 30.0, 40.0}) histogram.record(value);
  EXPECT_NEAR(histogram.quantile(0.25), 10.0, 0.05);
  EXPECT_NEAR(histogram.quantile(0.26), 20.0, 0.1);
  EXPECT_NEAR(histogram.quantile(0.5), 20.0, 0.1);
  EXPECT_NEAR(histogram.quantile(0.75), 30.0, 0.15);
  EXPECT_NEAR(histogram.quantile(0.76), 40.0, 0.2);
}

TEST(StreamingHistogram, NegativeAndNanClampToZero) {
  StreamingHistogram histogram;
  histogram.record(-5.0);
  histogram.record(std::numeric_limits<double>::quiet_NaN());
  histogram.record(4.0);
  EXPECT_EQ(histogram.count(), 3u);
  EXPECT_EQ(histogram.min(), 0.0);
  EXPECT_EQ(histogram.quantile(0.5), 0.0);
  EXPECT_DOUBLE_EQ(histogram.mean(), 4.0 / 3);
}

TEST(StreamingHistogram, ValuesBelowTheRangeGoToTheZeroBucket) {
  EXPECT_EQ(StreamingHistogram::bucket_index(0.0), 0);
  EXPECT_EQ(StreamingHistogram::bucket_index(1e-9), 0);
  EXPECT_EQ(StreamingHistogram::bucket_index(std::numeric_limits<double>::denorm_min()), 0);
  EXPECT_GT(StreamingHistogram::bucket_index(1e-6), 0);
  StreamingHistogram histogram;
  histogram.record(1e-9);
  histogram.record(2e-9);
  EXPECT_EQ(histogram.min(), 1e-9);
  EXPECT_EQ(histogram.max(), 2e-9);
  // The zero bucket reports 0, clamped up to the exact minimum.
  EXPECT_EQ(histogram.quantile(0.5), 1e-9);
}

TEST(StreamingHistogram, ValuesAboveTheRangeKeepExactMaxAndSaturateInfinity) {
  StreamingHistogram histogram;
  histogram.record(1e12);
  histogram.record(std::numeric_limits<double>::infinity());
  EXPECT_EQ(StreamingHistogram::bucket_index(1e12), StreamingHistogram::kBucketCount - 1);
  EXPECT_EQ(histogram.min(), 1e12);
  EXPECT_EQ(histogram.max(), std::numeric_limits<double>::max());
  EXPECT_EQ(histogram.quantile(0.5), 1e12);
  EXPECT_TRUE(std::isfinite(histogram.max()));
}

TEST(StreamingHistogram, CoversAtLeastOneMicroToOneBillion) {
  EXPECT_LE(std::ldexp(1.0, StreamingHistogram::kMinExponent), 1e-6);
  EXPECT_GT(std::ldexp(1.0, StreamingHistogram::kMaxExponent + 1), 1e9);
  EXPECT_LT(StreamingHistogram::bucket_index(1e9), StreamingHistogram::kBucketCount - 1);
}

TEST(StreamingHistogram, MergeEqualsRecordingEverythingInOne) {
  SplitMix64 random(5);
  StreamingHistogram first;
  StreamingHistogram second;
  StreamingHistogram both;
  for (int i = 0; i < 50'000; ++i) {
    const double a = random.exponential(20.0);
    const double b = random.uniform(0.0, 500.0);
    first.record(a);
    second.record(b);
    both.record(a);
    both.record(b);
  }
  first.merge(second);
  EXPECT_EQ(first.count(), both.count());
  EXPECT_EQ(first.min(), both.min());
  EXPECT_EQ(first.max(), both.max());
  EXPECT_NEAR(first.sum(), both.sum(), both.sum() * 1e-12);
  for (double q = 0.0; q <= 1.0; q += 0.01) EXPECT_EQ(first.quantile(q), both.quantile(q)) << q;
}

TEST(StreamingHistogram, MergeIntoEmptyAndFromEmpty) {
  StreamingHistogram empty;
  StreamingHistogram filled;
  filled.record(5.0);
  filled.record(9.0);
  StreamingHistogram target;
  target.merge(filled);
  target.merge(empty);
  EXPECT_EQ(target.count(), 2u);
  EXPECT_EQ(target.min(), 5.0);
  EXPECT_EQ(target.max(), 9.0);
}

TEST(StreamingHistogram, MemoryIsFixedAndRecordNeverAllocates) {
  // The object is a handful of scalars plus one bucket array sized at construction.
  static_assert(sizeof(StreamingHistogram) <= 64);
  static_assert(StreamingHistogram::memory_bytes() < 64 * 1024);
  StreamingHistogram histogram;
  SplitMix64 random(6);
  const uint64_t allocations_before = testing::allocations_so_far();
  for (int i = 0; i < 1'000'000; ++i) histogram.record(random.exponential(100.0));
  const uint64_t allocations_after = testing::allocations_so_far();
  EXPECT_EQ(allocations_after, allocations_before);
  EXPECT_EQ(histogram.count(), 1'000'000u);
}

}  // namespace
}  // namespace gangway
