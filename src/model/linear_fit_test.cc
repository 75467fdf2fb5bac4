#include "model/linear_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/node_spec.h"
#include "model/roofline_cost_model.h"

namespace gangway {
namespace {

LinearCostCoefficients known() {
  LinearCostCoefficients c;
  c.base_s = 0.0042;
  c.per_prefill_token_s = 3.1e-5;
  c.per_decode_seq_s = 1.7e-5;
  c.per_kv_token_s = 4.3e-8;
  return c;
}

// Batches that vary prefill tokens, decode sequences and KV tokens independently.
std::vector<CostSample> synthetic(const LinearCostCoefficients& c) {
  std::vector<CostSample> samples;
  for (int32_t decode : {0, 1, 7, 64, 250}) {
    for (int64_t context : {100, 3000, 31000}) {
      for (int32_t chunk : {0, 100, 2048}) {
        BatchShape b;
        b.decode_seqs = decode;
        b.decode_context_tokens = decode * context;
        b.prefill_tokens = chunk;
        b.prefill_seqs = chunk > 0 ? 1 : 0;
        b.prefill_context_tokens = chunk > 0 ? context / 2 : 0;
        if (b.empty()) continue;
        samples.push_back({b, c.seconds(b)});
      }
    }
  }
  return samples;
}

void expect_relative_near(double actual, double expected, double tolerance, const char* what) {
  EXPECT_NEAR(actual, expected, tolerance * std::abs(expected)) << what;
}

TEST(LinearFitTest, RecoversKnownCoefficientsFromExactLinearData) {
  const LinearCostCoefficients truth = known();
  const LinearFit fit = fit_linear_cost_model(synthetic(truth));
  expect_relative_near(fit.coefficients.base_s, truth.base_s, 1e-9, "base");
  expect_relative_near(fit.coefficients.per_prefill_token_s, truth.per_prefill_token_s, 1e-9,
                       "prefill");
  expect_relative_near(fit.coefficients.per_decode_seq_s, truth.per_decode_seq_s, 1e-9, "decode");
  expect_relative_near(fit.coefficients.per_kv_token_s, truth.per_kv_token_s, 1e-9, "kv");
  EXPECT_NEAR(fit.r_squared, 1.0, 1e-12);
  EXPECT_LT(fit.max_relative_error, 1e-9);
  EXPECT_EQ(fit.sample_count, synthetic(truth).size());
}

TEST(LinearFitTest, NonNegativeFitEqualsPlainFitWhenThatIsNonNegative) {
  const LinearFit plain = fit_linear_cost_model(synthetic(known()));
  const LinearFit constrained = fit_linear_cost_model_non_negative(synthetic(known()));
  expect_relative_near(constrained.coefficients.base_s, plain.coefficients.base_s, 1e-9, "base");
  expect_relative_near(constrained.coefficients.per_kv_token_s, plain.coefficients.per_kv_token_s,
                       1e-9, "kv");
}

TEST(LinearFitTest, NonNegativeFitClampsWhatPlainLeastSquaresPricesBelowZero) {
  LinearCostCoefficients truth = known();
  truth.per_decode_seq_s = -5e-6;  // data in which more sequences look cheaper
  const std::vector<CostSample> samples = synthetic(truth);
  const LinearFit plain = fit_linear_cost_model(samples);
  ASSERT_LT(plain.coefficients.per_decode_seq_s, 0.0);
  const LinearFit constrained = fit_linear_cost_model_non_negative(samples);
  EXPECT_GE(constrained.coefficients.base_s, 0.0);
  EXPECT_GE(constrained.coefficients.per_prefill_token_s, 0.0);
  EXPECT_EQ(constrained.coefficients.per_decode_seq_s, 0.0);
  EXPECT_GE(constrained.coefficients.per_kv_token_s, 0.0);
  EXPECT_LE(constrained.r_squared, plain.r_squared);
  EXPECT_GT(constrained.r_squared, 0.9);
  EXPECT_NO_THROW(LinearCostModel model(constrained.coefficients));
}

TEST(LinearFitTest, RejectsBadInputWithAClearMessage) {
  std::vector<CostSample> samples = synthetic(known());
  auto expect_message = [](const std::vector<CostSample>& s, const std::string& fragment) {
    try {
      fit_linear_cost_model(s);
      ADD_FAILURE() << "accepted; expected an error about " << fragment;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_message(std::vector<CostSample>(samples.begin(), samples.begin() + 3), "at least 4");

  std::vector<CostSample> no_prefill;
  for (const CostSample& s : samples) {
    if (s.batch.prefill_tokens == 0) no_prefill.push_back(s);
  }
  expect_message(no_prefill, "no sample has any prefill tokens");

  // One context length for every sequence and no prefill context: KV tokens = 2000 x decode
  // sequences, so the two coefficients cannot be told apart.
  std::vector<CostSample> collinear;
  for (int32_t decode : {1, 2, 5, 9, 30}) {
    for (int32_t chunk : {0, 64, 512}) {
      BatchShape b{chunk, chunk > 0 ? 1 : 0, 0, decode, decode * 2000LL};
      collinear.push_back({b, known().seconds(b)});
    }
  }
  expect_message(collinear, "linearly dependent");

  std::vector<CostSample> zero_time = samples;
  zero_time[5].seconds = 0;
  expect_message(zero_time, "sample 5");
}

class RooflineFitTest : public ::testing::Test {
 protected:
  NodeSpec node = default_node_spec();
  RooflineCostModel small_model{node.models[0], node.hardware};
  RooflineCostModel large_model{node.models[1], node.hardware};
};

TEST_F(RooflineFitTest, GridSkipsEmptyAndRepeatedBatchesAndHonoursTheKvCap) {
  // Decode-only and mixed: 9 decode sizes x 5 contexts x 5 chunks; prefill-only: 4 chunks.
  const std::vector<CostSample> all = sample_cost_model_grid(small_model);
  EXPECT_EQ(all.size(), 9u * 5 * 5 + 4);
  for (const CostSample& s : all) {
    EXPECT_FALSE(s.batch.empty());
    EXPECT_EQ(s.seconds, to_seconds(small_model.iteration_time(s.batch)));
  }
  CostSampleGrid capped;
  capped.max_kv_tokens = 100'000;
  const std::vector<CostSample> some = sample_cost_model_grid(small_model, capped);
  EXPECT_LT(some.size(), all.size());
  for (const CostSample& s : some) {
    EXPECT_LE(s.batch.decode_context_tokens + s.batch.prefill_context_tokens, 100'000);
  }
}

void report(const char* what, const LinearFit& fit) {
  const LinearCostCoefficients& c = fit.coefficients;
  std::printf(
      "[calibration] linear fit to %s (%zu samples): base %.3g s, prefill token %.3g s, decode "
      "seq %.3g s, KV token %.3g s; R^2 %.4f, max relative error %.2f\n",
      what, fit.sample_count, c.base_s, c.per_prefill_token_s, c.per_decode_seq_s, c.per_kv_token_s,
      fit.r_squared, fit.max_relative_error);
}

// The default grid (decode 1-256 sequences at 128-32k context, chunks of 0-2048 tokens) spans
// both sides of the roofline's max(compute, memory), so a linear model cannot follow it
// everywhere; overall it explains most of the variance.
TEST_F(RooflineFitTest, LinearFitToRooflineGridHasRSquaredAbove0_95) {
  const std::vector<CostSample> small_grid = sample_cost_model_grid(small_model);
  const std::vector<CostSample> large_grid = sample_cost_model_grid(large_model);
  const LinearFit small_fit = fit_linear_cost_model(small_grid);
  const LinearFit large_fit = fit_linear_cost_model(large_grid);
  const LinearFit small_nn = fit_linear_cost_model_non_negative(small_grid);
  const LinearFit large_nn = fit_linear_cost_model_non_negative(large_grid);
  report("8B roofline", small_fit);
  report("8B roofline, non-negative", small_nn);
  report("70B TP8 roofline", large_fit);
  report("70B TP8 roofline, non-negative", large_nn);
  EXPECT_GT(small_fit.r_squared, 0.95);
  EXPECT_GT(large_fit.r_squared, 0.95);
  EXPECT_GT(small_nn.r_squared, 0.95);
  EXPECT_GT(large_nn.r_squared, 0.95);
  // The non-negative fit always builds.
  EXPECT_NO_THROW(LinearCostModel model(small_nn.coefficients));
  EXPECT_NO_THROW(LinearCostModel model(large_nn.coefficients));
}

// Restricted to batches whose KV fits the pools of the co-located node (reference node: ~280k 8B
// tokens if the SM had all ~37 GB; the 70B's ~37 GB per GPU hold ~900k tokens at 40 KiB each).
TEST_F(RooflineFitTest, LinearFitToFeasibleRooflineBatchesHasRSquaredAbove0_95) {
  CostSampleGrid small_grid;
  small_grid.max_kv_tokens = 280'000;
  CostSampleGrid large_grid;
  large_grid.max_kv_tokens = 900'000;
  const LinearFit small_fit =
      fit_linear_cost_model_non_negative(sample_cost_model_grid(small_model, small_grid));
  const LinearFit large_fit =
      fit_linear_cost_model_non_negative(sample_cost_model_grid(large_model, large_grid));
  report("8B roofline, KV <= 280k tokens, non-negative", small_fit);
  report("70B TP8 roofline, KV <= 900k tokens, non-negative", large_fit);
  EXPECT_GT(small_fit.r_squared, 0.95);
  EXPECT_GT(large_fit.r_squared, 0.95);
}

}  // namespace
}  // namespace gangway
