// Tests for the deterministic random numbers: exact values (so a change of algorithm or seeding
// cannot pass unnoticed), stream independence, and the moments of every distribution.
//
// Statistical tolerances are 5 standard errors of the estimate for the sample size used
// (false-failure chance below 1e-6 per check), and the seeds are fixed, so a pass is stable.
#include "workload/rng.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

namespace gangway {
namespace {

struct Moments {
  double mean = 0;
  double variance = 0;
  double cv() const { return std::sqrt(variance) / mean; }
};

template <typename Draw>
Moments moments(int n, Draw draw) {
  // Welford's update, stable for large n.
  double mean = 0;
  double m2 = 0;
  for (int i = 1; i <= n; ++i) {
    const double x = draw();
    const double delta = x - mean;
    mean += delta / i;
    m2 += delta * (x - mean);
  }
  return {mean, m2 / (n - 1)};
}

// Checked against an independent Python implementation of splitmix64 + xoshiro256**.
TEST(RngTest, PinnedValues) {
  Rng zero(0);
  EXPECT_EQ(zero.next_u64(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(zero.next_u64(), 0xbf6e1f784956452aULL);
  EXPECT_EQ(zero.next_u64(), 0x1a5f849d4933e6e0ULL);
  Rng forty_two(42);
  EXPECT_EQ(forty_two.next_u64(), 0x15780b2e0c2ec716ULL);
  EXPECT_EQ(forty_two.next_u64(), 0x6104d9866d113a7eULL);
  Rng stream = Rng::for_stream(42, 7);
  EXPECT_EQ(stream.next_u64(), 0x7db7f462fb4ad45aULL);
  EXPECT_EQ(stream.next_u64(), 0x63010e916df1880dULL);
  Rng substream = Rng::for_stream(42, 7, 3);
  EXPECT_EQ(substream.next_u64(), 0xbec2ec62e57cae61ULL);
  EXPECT_EQ(substream.next_u64(), 0x21945307c2b14342ULL);
  // uniform01 takes the top 53 bits.
  Rng again(0);
  EXPECT_EQ(again.uniform01(), static_cast<double>(0x99ec5f36cb75f2b4ULL >> 11) * 0x1.0p-53);
}

TEST(RngTest, SameSeedSameNumbersDifferentSeedDifferent) {
  for (uint64_t seed : {0ULL, 1ULL, 12345ULL, ~0ULL}) {
    Rng a = Rng::for_stream(seed, 3);
    Rng b = Rng::for_stream(seed, 3);
    Rng other_seed = Rng::for_stream(seed + 1, 3);
    int equal_to_other = 0;
    for (int i = 0; i < 1000; ++i) {
      const double x = a.normal();
      ASSERT_EQ(x, b.normal());
      equal_to_other += x == other_seed.normal() ? 1 : 0;
    }
    EXPECT_EQ(equal_to_other, 0);
  }
}

TEST(RngTest, StreamsAreDistinctAndUncorrelated) {
  std::set<uint64_t> first_values;
  for (uint64_t stream = 0; stream < 1000; ++stream) {
    first_values.insert(Rng::for_stream(7, stream).next_u64());
    first_values.insert(Rng::for_stream(7, stream, 1).next_u64());
  }
  EXPECT_EQ(first_values.size(), 2000u);

  // Pearson correlation of neighbouring streams: standard error 1/sqrt(n).
  constexpr int kN = 200000;
  for (uint64_t stream = 0; stream < 4; ++stream) {
    Rng a = Rng::for_stream(99, stream);
    Rng b = Rng::for_stream(99, stream + 1);
    double sum_ab = 0;
    double sum_a = 0;
    double sum_b = 0;
    for (int i = 0; i < kN; ++i) {
      const double x = a.uniform01() - 0.5;
      const double y = b.uniform01() - 0.5;
      sum_ab += x * y;
      sum_a += x;
      sum_b += y;
    }
    const double correlation = (sum_ab / kN - (sum_a / kN) * (sum_b / kN)) / (1.0 / 12.0);
    EXPECT_LT(std::abs(correlation), 5.0 / std::sqrt(kN)) << "streams " << stream;
  }
}

TEST(RngTest, UniformRangesAndMean) {
  Rng rng(5);
  constexpr int kN = 1000000;
  double sum = 0;
  for (int i = 0; i < kN; ++i) {
    const double u = rng.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    const double open = rng.uniform_open01();
    ASSERT_GT(open, 0.0);
    ASSERT_LE(open, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / kN, 0.5, 5 * std::sqrt(1.0 / 12 / kN));
}

TEST(RngTest, UniformIntIsUnbiased) {
  Rng rng(11);
  EXPECT_EQ(rng.uniform_int(1), 0u);
  // Chi-square with 6 degrees of freedom: P(X > 38.26) = 1e-6.
  constexpr int kBuckets = 7;
  constexpr int kN = 700000;
  std::vector<int> counts(kBuckets);
  for (int i = 0; i < kN; ++i) ++counts[rng.uniform_int(kBuckets)];
  double chi_square = 0;
  for (int c : counts)
    chi_square += (c - kN / kBuckets) * (c - kN / kBuckets) / (kN / kBuckets * 1.0);
  EXPECT_LT(chi_square, 38.26);
  // A modulus just above 2^63: plain modulo would give the lower half twice the weight.
  const uint64_t big = (1ULL << 63) + 1;
  int lower_half = 0;
  constexpr int kBigN = 100000;
  for (int i = 0; i < kBigN; ++i) {
    const uint64_t v = rng.uniform_int(big);
    ASSERT_LT(v, big);
    lower_half += v < big / 2 ? 1 : 0;
  }
  EXPECT_NEAR(lower_half / double(kBigN), 0.5, 5 * 0.5 / std::sqrt(kBigN));
  EXPECT_THROW(rng.uniform_int(0), std::invalid_argument);
}

TEST(RngTest, ExponentialMeanAndCv) {
  Rng rng(21);
  constexpr int kN = 1000000;
  const Moments m = moments(kN, [&] { return rng.exponential(2.5); });
  // Standard error of the mean: 0.4 / sqrt(n) = 4e-4.
  EXPECT_NEAR(m.mean, 0.4, 5 * 0.4 / std::sqrt(kN));
  // Sample variance of an exponential: relative standard error sqrt(8/n); CV half of that.
  EXPECT_NEAR(m.cv(), 1.0, 5 * 0.5 * std::sqrt(8.0 / kN) + 5 / std::sqrt(kN));
}

TEST(RngTest, NormalMoments) {
  Rng rng(22);
  constexpr int kN = 1000000;
  const Moments m = moments(kN, [&] { return rng.normal(); });
  EXPECT_NEAR(m.mean, 0.0, 5 / std::sqrt(kN));
  EXPECT_NEAR(m.variance, 1.0, 5 * std::sqrt(2.0 / kN));
}

TEST(RngTest, GammaMeanAndCv) {
  constexpr int kN = 400000;
  for (const double shape : {0.1, 0.3, 0.5, 1.0, 2.5, 10.0, 400.0}) {
    Rng rng = Rng::for_stream(23, static_cast<uint64_t>(shape * 100));
    const double scale = 2.0;
    const Moments m = moments(kN, [&] { return rng.gamma(shape, scale); });
    const double cv = 1 / std::sqrt(shape);
    // Mean: relative standard error cv / sqrt(n). Variance: relative standard error
    // sqrt((2 + 6/shape) / n) (gamma's excess kurtosis is 6/shape); the CV moves by half that
    // plus the mean's error.
    const double mean_tolerance = 5 * cv / std::sqrt(kN);
    EXPECT_NEAR(m.mean / (shape * scale), 1.0, mean_tolerance) << "shape " << shape;
    const double cv_tolerance = 5 * 0.5 * std::sqrt((2 + 6 / shape) / kN) + mean_tolerance;
    EXPECT_NEAR(m.cv() / cv, 1.0, cv_tolerance) << "shape " << shape;
  }
  Rng rng(1);
  EXPECT_THROW(rng.gamma(0.0, 1.0), std::invalid_argument);
}

TEST(RngTest, LognormalMeanAndP99) {
  Rng rng(24);
  constexpr int kN = 1000000;
  const double mu = 1.5;
  const double sigma = 0.8;
  std::vector<double> samples(kN);
  for (double& x : samples) x = rng.lognormal(mu, sigma);
  double sum = 0;
  for (double x : samples) sum += x;
  const double mean = std::exp(mu + sigma * sigma / 2);
  // Relative standard error of the mean: sqrt(exp(sigma^2) - 1) / sqrt(n) = 0.09 %.
  EXPECT_NEAR(sum / kN / mean, 1.0, 5 * std::sqrt(std::exp(sigma * sigma) - 1) / std::sqrt(kN));
  std::nth_element(samples.begin(), samples.begin() + kN * 99 / 100, samples.end());
  const double p99 = samples[kN * 99 / 100];
  const double expected_p99 = std::exp(mu + 2.326348 * sigma);
  // Quantile standard error: sqrt(p (1-p) / n) / density(p99); density = phi(z) / (x sigma).
  const double density =
      std::exp(-2.326348 * 2.326348 / 2) / std::sqrt(2 * M_PI) / (expected_p99 * sigma);
  EXPECT_NEAR(p99, expected_p99, 5 * std::sqrt(0.99 * 0.01 / kN) / density);
}

// Units in the last place between two doubles of the same sign.
int64_t ulp_distance(double a, double b) {
  int64_t ia = 0;
  int64_t ib = 0;
  std::memcpy(&ia, &a, sizeof a);
  std::memcpy(&ib, &b, sizeof b);
  return std::abs(ia - ib);
}

TEST(PortableMathTest, LogAndExpWithinTwoUlpOfLibm) {
  Rng rng(25);
  int64_t worst_log = 0;
  int64_t worst_exp = 0;
  for (int i = 0; i < 200000; ++i) {
    // log over 2^-1000 .. 2^1000 and near 1; exp over -700..700 and near 0.
    const double wide =
        std::ldexp(0.5 + rng.uniform01(), static_cast<int>(rng.uniform_int(2001)) - 1000);
    const double near_one = 0.5 + rng.uniform01();
    worst_log = std::max({worst_log, ulp_distance(portable::log(wide), std::log(wide)),
                          ulp_distance(portable::log(near_one), std::log(near_one))});
    const double x = -700 + 1400 * rng.uniform01();
    const double small = (rng.uniform01() - 0.5) * 1e-3;
    worst_exp = std::max({worst_exp, ulp_distance(portable::exp(x), std::exp(x)),
                          ulp_distance(portable::exp(small), std::exp(small))});
  }
  EXPECT_LE(worst_log, 2);
  EXPECT_LE(worst_exp, 2);
  EXPECT_EQ(portable::log(1.0), 0.0);
  EXPECT_EQ(portable::exp(0.0), 1.0);
  EXPECT_EQ(portable::log(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(portable::log(-1.0)));
  EXPECT_EQ(portable::exp(1000.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(portable::exp(-1000.0), 0.0);
  EXPECT_NEAR(portable::pow(2.0, 10.0), 1024.0, 1e-10);
  EXPECT_EQ(portable::pow(7.0, 0.0), 1.0);
}

TEST(ZipfSamplerTest, FrequenciesMatchTheLaw) {
  const ZipfSampler zipf(10, 1.1);
  double harmonic = 0;
  for (int k = 1; k <= 10; ++k) harmonic += std::pow(k, -1.1);
  Rng rng(26);
  constexpr int kN = 1000000;
  std::vector<int> counts(10);
  for (int i = 0; i < kN; ++i) ++counts[static_cast<size_t>(zipf.sample(rng))];
  for (int k = 0; k < 10; ++k) {
    const double p = std::pow(k + 1, -1.1) / harmonic;
    EXPECT_NEAR(zipf.probability(k), p, 1e-12);
    // Binomial standard error of a frequency: sqrt(p (1-p) / n).
    EXPECT_NEAR(counts[static_cast<size_t>(k)] / double(kN), p, 5 * std::sqrt(p * (1 - p) / kN))
        << "rank " << k;
  }
}

TEST(ZipfSamplerTest, LargeAndUniformCases) {
  const ZipfSampler big(1000000, 0.99);
  EXPECT_EQ(big.size(), 1000000);
  Rng rng(27);
  for (int i = 0; i < 10000; ++i) {
    const int64_t rank = big.sample(rng);
    ASSERT_GE(rank, 0);
    ASSERT_LT(rank, 1000000);
  }
  EXPECT_GT(big.probability(0), big.probability(1));
  const ZipfSampler flat(4, 0.0);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(flat.probability(k), 0.25, 1e-15);
  EXPECT_THROW(ZipfSampler(0, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace gangway
