// Fits the linear cost model's four coefficients to timed batches, so that step times measured on
// real GPUs (or predicted by the roofline) become a LinearCostModel. Ordinary least squares on
// the features (1, prefill tokens, decode sequences, KV tokens read), solved through the 4 x 4
// normal equations with column scaling and partial pivoting; a non-negative variant gives
// coefficients that make_cost_model accepts even when plain least squares would price some
// feature below zero. Also builds a grid of sample batches from any CostModel, so that a linear
// model can be fitted to the roofline and its fit quality reported. Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "model/cost_model.h"
#include "model/linear_cost_model.h"

namespace gangway {

// One timed iteration: the batch and how long it took, in seconds (> 0).
struct CostSample {
  BatchShape batch;
  double seconds = 0;
};

struct LinearFit {
  LinearCostCoefficients coefficients;
  // Coefficient of determination over the samples (1 = perfect; can be negative for the
  // non-negative fit, which may do worse than the mean).
  double r_squared = 0;
  // max |predicted - measured| / measured over the samples.
  double max_relative_error = 0;
  std::size_t sample_count = 0;
};

// Ordinary least squares. Throws std::invalid_argument for fewer than four samples, a sample
// with a negative count or a non-positive or non-finite time, or samples that do not determine
// every coefficient (a feature that is zero in every sample, or features that move together);
// the message says which.
LinearFit fit_linear_cost_model(std::span<const CostSample> samples);

// Least squares with every coefficient >= 0: the exact optimum, found by solving the least
// squares problem on each of the 15 non-empty subsets of coefficients (the others fixed at zero)
// and keeping the best one whose coefficients are all non-negative. Equals
// fit_linear_cost_model when that one is already non-negative. Throws as it does, except that
// features that are always zero or collinear are dropped (priced at zero) instead of rejected.
LinearFit fit_linear_cost_model_non_negative(std::span<const CostSample> samples);

// R^2 and maximum relative error of `coefficients` over `samples` (for a fit judged on samples
// it was not fitted to). REQUIRES: samples non-empty with positive times.
LinearFit evaluate_linear_fit(const LinearCostCoefficients& coefficients,
                              std::span<const CostSample> samples);

// The batches to sample: every combination of a decode batch (decode_seqs sequences of
// context_tokens each) with a prefill chunk (one sequence of prefill_chunk_tokens new tokens on
// top of prefill_context_tokens cached ones). Zero entries give prefill-only and decode-only
// batches; the empty batch is skipped, and so are repeats of a prefill-only batch across contexts.
struct CostSampleGrid {
  std::vector<int32_t> decode_seqs = {0, 1, 2, 4, 8, 16, 32, 64, 128, 256};
  std::vector<int32_t> context_tokens = {128, 512, 2048, 8192, 32768};
  std::vector<int32_t> prefill_chunk_tokens = {0, 128, 512, 1024, 2048};
  std::vector<int32_t> prefill_context_tokens = {0};
  // Skips batches whose KV tokens (decode contexts plus the chunk's context) exceed this, e.g.
  // the KV pool's capacity, so that a fit is not pulled by batches that could never run.
  // 0: no limit.
  int64_t max_kv_tokens = 0;
};

// Times every batch of `grid` with `model` (iteration_time, in seconds).
std::vector<CostSample> sample_cost_model_grid(const CostModel& model,
                                               const CostSampleGrid& grid = {});

}  // namespace gangway
