// Tests for arrival processes: measured rate and inter-arrival CV of Poisson and gamma, per-phase
// rates of on/off, per-segment rates of a ramp, rate_scale, and exact reproducibility.
//
// Counts of a Poisson process have standard deviation sqrt(expected count); tolerances are 5 of
// those (or 5 standard errors of the estimate named in the check). Seeds are fixed.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "core/input_error.h"
#include "workload/arrival_process.h"
#include "workload/rng.h"
#include "workload/workload_spec.h"

namespace gangway {
namespace {

ArrivalSpec poisson(double rate_per_s) {
  ArrivalSpec spec;
  spec.kind = ArrivalSpec::Kind::poisson;
  spec.rate_per_s = rate_per_s;
  return spec;
}

ArrivalSpec gamma_arrivals(double rate_per_s, double cv) {
  ArrivalSpec spec;
  spec.kind = ArrivalSpec::Kind::gamma;
  spec.rate_per_s = rate_per_s;
  spec.cv = cv;
  return spec;
}

// Arrival times in seconds, up to `count` of them or until `until_s`.
std::vector<double> arrivals(const ArrivalSpec& spec, uint64_t seed, size_t count,
                             double until_s = 1e18) {
  ArrivalProcess process(spec, Rng(seed));
  std::vector<double> times;
  while (times.size() < count) {
    const std::optional<Time> t = process.next();
    if (!t || to_seconds(*t) >= until_s) break;
    if (!times.empty()) {
      EXPECT_GE(to_seconds(*t), times.back());
    }
    times.push_back(to_seconds(*t));
  }
  return times;
}

struct GapStats {
  double rate_per_s = 0;
  double cv = 0;
};

GapStats gap_stats(const std::vector<double>& times) {
  double sum = 0;
  double sum_squares = 0;
  double previous = 0;
  for (const double t : times) {
    const double gap = t - previous;
    sum += gap;
    sum_squares += gap * gap;
    previous = t;
  }
  const double n = static_cast<double>(times.size());
  const double mean = sum / n;
  const double variance = sum_squares / n - mean * mean;
  return {1.0 / mean, std::sqrt(variance) / mean};
}

TEST(ArrivalProcessTest, PoissonRateAndCv) {
  constexpr size_t kN = 400000;
  const GapStats stats = gap_stats(arrivals(poisson(250), 1, kN));
  // Rate: relative standard error 1/sqrt(n). CV of exponential gaps: 0.5 * sqrt(8/n) + 1/sqrt(n).
  EXPECT_NEAR(stats.rate_per_s / 250, 1.0, 5 / std::sqrt(kN));
  EXPECT_NEAR(stats.cv, 1.0, 5 * (0.5 * std::sqrt(8.0 / kN) + 1 / std::sqrt(kN)));
}

TEST(ArrivalProcessTest, GammaCvAsConfigured) {
  constexpr size_t kN = 400000;
  for (const double cv : {0.25, 0.5, 2.0, 4.0}) {
    const GapStats stats = gap_stats(arrivals(gamma_arrivals(40, cv), 2, kN));
    const double shape = 1 / (cv * cv);
    // Mean gap: relative standard error cv/sqrt(n). Variance: sqrt((2 + 6/shape)/n); CV half.
    const double rate_tolerance = 5 * cv / std::sqrt(kN);
    EXPECT_NEAR(stats.rate_per_s / 40, 1.0, rate_tolerance) << "cv " << cv;
    EXPECT_NEAR(stats.cv / cv, 1.0, 5 * 0.5 * std::sqrt((2 + 6 / shape) / kN) + rate_tolerance)
        << "cv " << cv;
  }
}

TEST(ArrivalProcessTest, GammaWithZeroCvIsEvenlySpaced) {
  const std::vector<double> times = arrivals(gamma_arrivals(8, 0), 3, 100);
  ASSERT_EQ(times.size(), 100u);
  for (size_t i = 0; i < times.size(); ++i) EXPECT_NEAR(times[i], 0.125 * (i + 1), 1e-9);
}

TEST(ArrivalProcessTest, OnOffRatesPerPhase) {
  ArrivalSpec spec;
  spec.kind = ArrivalSpec::Kind::on_off;
  spec.on_rate_per_s = 200;
  spec.off_rate_per_s = 20;
  spec.on_s = 2;
  spec.off_s = 3;
  constexpr double kUntil = 5000;  // 1000 cycles: 2000 s on, 3000 s off
  const std::vector<double> times = arrivals(spec, 4, 10000000, kUntil);
  double on_count = 0;
  double off_count = 0;
  for (const double t : times) {
    (std::fmod(t, 5.0) < 2.0 ? on_count : off_count) += 1;
  }
  // Expected 400,000 on and 60,000 off.
  EXPECT_NEAR(on_count, 400000, 5 * std::sqrt(400000));
  EXPECT_NEAR(off_count, 60000, 5 * std::sqrt(60000));

  // No arrivals at all in off phases of rate 0.
  spec.off_rate_per_s = 0;
  for (const double t : arrivals(spec, 5, 100000, 500)) ASSERT_LT(std::fmod(t, 5.0), 2.0);
  // Both rates 0: no arrivals.
  spec.on_rate_per_s = 0;
  EXPECT_TRUE(arrivals(spec, 6, 10).empty());
}

TEST(ArrivalProcessTest, RampRatesPerSegment) {
  struct Case {
    double start_rate;
    double end_rate;
  };
  for (const Case c : {Case{10, 110}, Case{110, 10}, Case{50, 0}}) {
    ArrivalSpec spec;
    spec.kind = ArrivalSpec::Kind::ramp;
    spec.start_rate_per_s = c.start_rate;
    spec.end_rate_per_s = c.end_rate;
    spec.ramp_s = 100;
    // Counts in [0, 50), [50, 100), [100, 200) over 40 runs.
    constexpr int kRuns = 40;
    double counts[3] = {0, 0, 0};
    for (int run = 0; run < kRuns; ++run) {
      for (const double t : arrivals(spec, 100 + run, 10000000, 200)) {
        counts[t < 50 ? 0 : t < 100 ? 1 : 2] += 1;
      }
    }
    // Integral of the linear rate over each segment.
    const double slope = (c.end_rate - c.start_rate) / 100;
    const auto integral = [&](double a, double b) {
      return c.start_rate * (b - a) + slope * (b * b - a * a) / 2;
    };
    const double expected[3] = {kRuns * integral(0, 50), kRuns * integral(50, 100),
                                kRuns * c.end_rate * 100};
    for (int s = 0; s < 3; ++s) {
      EXPECT_NEAR(counts[s], expected[s], 5 * std::sqrt(expected[s]) + 1e-9)
          << c.start_rate << " -> " << c.end_rate << " segment " << s;
    }
  }
}

TEST(ArrivalProcessTest, RateScaleMultipliesEveryRate) {
  ArrivalSpec spec = poisson(100);
  spec.rate_scale = 0.5;
  constexpr size_t kN = 200000;
  EXPECT_NEAR(gap_stats(arrivals(spec, 7, kN)).rate_per_s / 50, 1.0, 5 / std::sqrt(kN));
  spec.rate_scale = 0;
  EXPECT_TRUE(arrivals(spec, 7, 10).empty());
  EXPECT_TRUE(arrivals(poisson(0), 7, 10).empty());
}

TEST(ArrivalProcessTest, SameSeedSameTimesAndPinned) {
  ArrivalProcess a(gamma_arrivals(1000, 3), Rng(8));
  ArrivalProcess b(gamma_arrivals(1000, 3), Rng(8));
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(a.next(), b.next());
  // Pinned nanoseconds (matched by an independent Python implementation).
  ArrivalProcess pinned(poisson(100), Rng(2024));
  std::vector<int64_t> first;
  for (int i = 0; i < 3; ++i) first.push_back(pinned.next()->ns());
  EXPECT_EQ(first, (std::vector<int64_t>{28861089, 31318767, 57622031}));
}

TEST(ArrivalProcessTest, InvalidSpecsAreInputErrors) {
  ArrivalSpec spec = poisson(-1);
  try {
    validate(spec, "s.yaml:3", "chat.arrival");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "s.yaml:3: chat.arrival.rate_per_s: expected a finite number >= 0, got -1");
  }
  spec = ArrivalSpec();
  spec.kind = ArrivalSpec::Kind::on_off;
  spec.on_rate_per_s = 1;
  spec.on_s = 0;
  spec.off_s = 1;
  EXPECT_THROW(ArrivalProcess(spec, Rng(1)), InputError);
}

}  // namespace
}  // namespace gangway
