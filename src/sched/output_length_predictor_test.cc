#include "sched/output_length_predictor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace gangway {
namespace {

Sequence running(int32_t prompt, int32_t generated, int32_t max_tokens = 100000) {
  Sequence seq;
  seq.spec.model = ModelId(0);
  seq.spec.prompt_tokens = prompt;
  seq.spec.max_tokens = max_tokens;
  seq.generated_tokens = generated;
  return seq;
}

// A fixed-seed generator for geometric lengths (no std:: distributions in tests either).
struct SplitMix {
  uint64_t state;
  double uniform() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
  int32_t geometric(double mean) {
    const double p = 1.0 / mean;
    return 1 + static_cast<int32_t>(std::floor(std::log1p(-uniform()) / std::log1p(-p)));
  }
};

TEST(OutputLengthPredictor, UsesTheMemorylessPriorBeforeLearningAnything) {
  OutputLengthPredictor predictor(1, 80, false);
  EXPECT_DOUBLE_EQ(predictor.expected_remaining(running(100, 0)), 80);
  EXPECT_DOUBLE_EQ(predictor.expected_remaining(running(100, 500)), 80);
  // ln(10) x mean for the 90th percentile of a geometric-like residual.
  EXPECT_NEAR(predictor.conservative_remaining(running(100, 0)), 80 * std::log(10.0), 1e-9);
  // ln(5 / 4) x mean for the 20th.
  EXPECT_NEAR(predictor.short_remaining(running(100, 0)), 80 * std::log(5.0 / 4.0), 1e-9);
}

TEST(OutputLengthPredictor, BoundedByMaxTokensAndAtLeastOne) {
  OutputLengthPredictor predictor(1, 500, false);
  EXPECT_DOUBLE_EQ(predictor.expected_remaining(running(100, 90, 100)), 10);
  EXPECT_DOUBLE_EQ(predictor.expected_remaining(running(100, 99, 100)), 1);
  EXPECT_DOUBLE_EQ(predictor.conservative_remaining(running(100, 0, 64)), 64);
  EXPECT_DOUBLE_EQ(predictor.short_remaining(running(100, 0, 30)), 30);
  OutputLengthPredictor short_prior(1, 2, false);
  EXPECT_DOUBLE_EQ(short_prior.short_remaining(running(100, 0)), 1);
}

TEST(OutputLengthPredictor, LearnsAConstantLengthAndItsResidual) {
  OutputLengthPredictor predictor(1, 10, false);
  for (int i = 0; i < 1000; ++i) predictor.observe(ModelId(0), 300, 200);
  // 200 lies in a ~10 % wide bin; the prediction is its midpoint.
  EXPECT_NEAR(predictor.expected_remaining(running(300, 0)), 200, 10);
  EXPECT_NEAR(predictor.expected_remaining(running(300, 150)), 50, 10);
  EXPECT_GE(predictor.conservative_remaining(running(300, 0)), 200);
  // Every request is 200 long: its 20th percentile is too (to the bin's width).
  EXPECT_NEAR(predictor.short_remaining(running(300, 0)), 200, 20);
  EXPECT_NEAR(predictor.short_remaining(running(300, 150)), 50, 20);
  EXPECT_EQ(predictor.observations(ModelId(0)), 1000);
}

TEST(OutputLengthPredictor, GeometricLengthsGiveARoughlyConstantResidual) {
  for (uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    OutputLengthPredictor predictor(1, 10, false);
    SplitMix rng{seed};
    for (int i = 0; i < 20000; ++i) predictor.observe(ModelId(0), 500, rng.geometric(60));
    // Memoryless: E[L - a | L > a] = mean whatever a is (binning adds a few percent).
    for (int32_t age : {0, 30, 60, 120}) {
      EXPECT_NEAR(predictor.expected_remaining(running(500, age)), 60, 6)
          << "seed " << seed << " age " << age;
    }
  }
}

// The 20th percentile of a geometric residual with mean m is the least r with
// 1 - (1 - 1/m)^r >= 0.2; lengths up to 16 have bins of their own, so it comes out exact.
TEST(OutputLengthPredictor, GeometricLengthsGiveTheirShortQuantileAtEveryAge) {
  const double mean = 32;
  const double exact = std::ceil(std::log(0.8) / std::log(1 - 1 / mean));  // 8
  for (uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    OutputLengthPredictor predictor(1, 500, false);
    SplitMix rng{seed};
    for (int i = 0; i < 20000; ++i) predictor.observe(ModelId(0), 100, rng.geometric(mean));
    for (int32_t age : {0, 5, 10}) {
      EXPECT_NEAR(predictor.short_remaining(running(100, age)), exact, 1)
          << "seed " << seed << " age " << age;
      EXPECT_LT(predictor.short_remaining(running(100, age)),
                predictor.expected_remaining(running(100, age)) / 3);
    }
  }
}

TEST(OutputLengthPredictor, SeparatesPromptLengthBuckets) {
  OutputLengthPredictor predictor(1, 10, false);
  for (int i = 0; i < 500; ++i) {
    predictor.observe(ModelId(0), 100, 20);     // short prompts, short answers
    predictor.observe(ModelId(0), 10000, 900);  // long prompts, long answers
  }
  EXPECT_NEAR(predictor.expected_remaining(running(100, 0)), 20, 2);
  EXPECT_NEAR(predictor.expected_remaining(running(10000, 0)), 900, 60);
  // A bucket with no data of its own uses the model's pooled histogram.
  const double pooled = predictor.expected_remaining(running(1000, 0));
  EXPECT_GT(pooled, 20);
  EXPECT_LT(pooled, 900);
}

TEST(OutputLengthPredictor, OracleReadsTheTrueLength) {
  OutputLengthPredictor predictor(1, 10, true);
  Sequence seq = running(100, 7);
  seq.spec.oracle_output_tokens = 42;
  EXPECT_DOUBLE_EQ(predictor.expected_remaining(seq), 35);
  EXPECT_DOUBLE_EQ(predictor.conservative_remaining(seq), 35);
  EXPECT_DOUBLE_EQ(predictor.short_remaining(seq), 35);
}

}  // namespace
}  // namespace gangway
