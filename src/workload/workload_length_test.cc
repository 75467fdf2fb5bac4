// Tests for token-length distributions: moments of each kind, the lognormal fit from mean and
// p99, clamps, and the errors for specs that cannot be sampled.
//
// Tolerances are 5 standard errors for the sample size (see each check); seeds are fixed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/input_error.h"
#include "workload/length_sampler.h"
#include "workload/length_spec_for_tests.h"
#include "workload/rng.h"
#include "workload/workload_spec.h"

namespace gangway {
namespace {

std::string validation_error(const LengthSpec& spec) {
  try {
    validate(spec, "scenario.yaml:7", "chat.prompt_tokens");
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

TEST(LengthSamplerTest, ConstantAndClamps) {
  Rng rng(1);
  EXPECT_EQ(LengthSampler(constant_length(37)).sample(rng), 37);
  LengthSpec clamped = constant_length(37);
  clamped.max = 20;
  EXPECT_EQ(LengthSampler(clamped).sample(rng), 20);
  clamped = constant_length(3);
  clamped.min = 10;
  EXPECT_EQ(LengthSampler(clamped).sample(rng), 10);
}

TEST(LengthSamplerTest, GeometricMeanAndShape) {
  const LengthSampler sampler(geometric_length(50));
  Rng rng(2);
  constexpr int kN = 1000000;
  double sum = 0;
  int ones = 0;
  int minimum = 1 << 30;
  for (int i = 0; i < kN; ++i) {
    const int32_t length = sampler.sample(rng);
    sum += length;
    ones += length == 1 ? 1 : 0;
    minimum = std::min(minimum, length);
  }
  EXPECT_EQ(minimum, 1);
  // Variance (1-p)/p^2 = 2450: standard error of the mean 0.0495.
  EXPECT_NEAR(sum / kN, 50.0, 5 * std::sqrt(2450.0 / kN));
  // P(L = 1) = p = 0.02, binomial standard error sqrt(p (1-p) / n).
  EXPECT_NEAR(ones / double(kN), 0.02, 5 * std::sqrt(0.02 * 0.98 / kN));
  // Mean 1: always 1.
  const LengthSampler one(geometric_length(1));
  for (int i = 0; i < 100; ++i) ASSERT_EQ(one.sample(rng), 1);
}

TEST(LengthSamplerTest, LognormalFitFromMeanAndP99) {
  // sigma = z - sqrt(z^2 - 2 ln 8) for p99/mean = 8.
  const LognormalParams params = lognormal_from_mean_p99(500, 4000);
  const double z = 2.326348;
  EXPECT_NEAR(params.sigma, z - std::sqrt(z * z - 2 * std::log(8.0)), 1e-12);
  EXPECT_NEAR(std::exp(params.mu + params.sigma * params.sigma / 2), 500, 1e-9);
  EXPECT_NEAR(std::exp(params.mu + z * params.sigma), 4000, 1e-9);
  EXPECT_NEAR(lognormal_max_p99_over_mean(), 14.968492748387, 1e-9);
}

TEST(LengthSamplerTest, LognormalSamplesHaveTheRequestedMeanAndP99) {
  const LengthSampler sampler(lognormal_length(500, 4000));
  const double sigma = sampler.lognormal().sigma;
  Rng rng(3);
  constexpr int kN = 1000000;
  std::vector<int32_t> samples(kN);
  double sum = 0;
  for (int32_t& s : samples) {
    s = sampler.sample(rng);
    sum += s;
  }
  // Relative standard error of the mean: sqrt(exp(sigma^2) - 1) / sqrt(n) = 0.19 %; rounding to
  // integers moves the mean by far less.
  EXPECT_NEAR(sum / kN / 500.0, 1.0, 5 * std::sqrt(std::exp(sigma * sigma) - 1) / std::sqrt(kN));
  std::nth_element(samples.begin(), samples.begin() + kN * 99 / 100, samples.end());
  const double p99 = samples[kN * 99 / 100];
  // Quantile standard error sqrt(p(1-p)/n) / density(p99) = 18 tokens; plus 1 for rounding.
  const double density = std::exp(-2.326348 * 2.326348 / 2) / std::sqrt(2 * M_PI) / (4000 * sigma);
  EXPECT_NEAR(p99, 4000, 5 * std::sqrt(0.99 * 0.01 / kN) / density + 1);
  EXPECT_GE(*std::min_element(samples.begin(), samples.end()), 1);
}

TEST(LengthSamplerTest, EmpiricalDrawsEachValueUniformly) {
  LengthSpec spec;
  spec.kind = LengthSpec::Kind::empirical;
  spec.values = {3, 10, 10, 700};
  spec.max = 500;
  const LengthSampler sampler(spec);
  Rng rng(4);
  constexpr int kN = 400000;
  int threes = 0;
  int tens = 0;
  int capped = 0;
  for (int i = 0; i < kN; ++i) {
    const int32_t v = sampler.sample(rng);
    threes += v == 3;
    tens += v == 10;
    capped += v == 500;
  }
  EXPECT_EQ(threes + tens + capped, kN);
  // Binomial standard errors: sqrt(p (1-p) / n).
  EXPECT_NEAR(threes / double(kN), 0.25, 5 * std::sqrt(0.25 * 0.75 / kN));
  EXPECT_NEAR(tens / double(kN), 0.5, 5 * std::sqrt(0.25 / kN));
}

TEST(LengthSamplerTest, SameSeedSameLengths) {
  const LengthSampler sampler(lognormal_length(200, 1500));
  Rng a(9);
  Rng b(9);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(sampler.sample(a), sampler.sample(b));
  // Pinned (and matched by an independent Python implementation): the same on every platform.
  Rng pinned(2024);
  std::vector<int32_t> first;
  for (int i = 0; i < 5; ++i) first.push_back(sampler.sample(pinned));
  EXPECT_EQ(first, (std::vector<int32_t>{255, 50, 113, 124, 280}));
}

TEST(LengthSpecValidationTest, LognormalErrorsNameTheFields) {
  const std::string too_wide = validation_error(lognormal_length(100, 1500));
  EXPECT_EQ(too_wide,
            "scenario.yaml:7: chat.prompt_tokens.p99: expected p99 / mean below 14.9685 "
            "(exp(z^2/2), z = 2.326348) for a lognormal length, got p99 = 1500, mean = 100");
  const std::string below_mean = validation_error(lognormal_length(100, 80));
  EXPECT_EQ(below_mean,
            "scenario.yaml:7: chat.prompt_tokens.p99: expected p99 > mean for a lognormal length "
            "(p99 = 80, mean = 100)");
  EXPECT_THROW(LengthSampler(lognormal_length(100, 1497)), InputError);
  EXPECT_NO_THROW(LengthSampler(lognormal_length(100, 1496)));
}

TEST(LengthSpecValidationTest, OtherErrors) {
  EXPECT_EQ(validation_error(constant_length(0)),
            "scenario.yaml:7: chat.prompt_tokens.value: expected a number >= 1, got 0");
  EXPECT_EQ(validation_error(geometric_length(0.5)),
            "scenario.yaml:7: chat.prompt_tokens.mean: expected a number >= 1, got 0.5");
  LengthSpec empty;
  empty.kind = LengthSpec::Kind::empirical;
  EXPECT_EQ(validation_error(empty),
            "scenario.yaml:7: chat.prompt_tokens.values: expected at least one value");
  LengthSpec bad_range = constant_length(5);
  bad_range.min = 10;
  bad_range.max = 5;
  EXPECT_EQ(validation_error(bad_range),
            "scenario.yaml:7: chat.prompt_tokens.max: expected a number >= min (10), got 5");
  LengthSpec zero_min = constant_length(5);
  zero_min.min = 0;
  EXPECT_EQ(validation_error(zero_min),
            "scenario.yaml:7: chat.prompt_tokens.min: expected a number >= 1, got 0");
}

TEST(LengthSpecValidationTest, KindNames) {
  EXPECT_EQ(parse_length_kind("lognormal", "s.yaml:2", "chat.prompt_tokens.kind"),
            LengthSpec::Kind::lognormal);
  EXPECT_EQ(parse_arrival_kind("on_off", "s.yaml:2", "chat.arrival.kind"),
            ArrivalSpec::Kind::on_off);
  EXPECT_EQ(to_string(ArrivalSpec::Kind::ramp), "ramp");
  try {
    parse_length_kind("normal", "s.yaml:2", "chat.prompt_tokens.kind");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "s.yaml:2: chat.prompt_tokens.kind: expected one of constant, geometric, "
                 "lognormal, empirical, got 'normal'");
  }
  try {
    parse_arrival_kind("bursty", "s.yaml:3", "chat.arrival.kind");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "s.yaml:3: chat.arrival.kind: expected one of poisson, gamma, on_off, ramp, got "
                 "'bursty'");
  }
}

}  // namespace
}  // namespace gangway
