#include "model/linear_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace gangway {
namespace {

constexpr int kCoefficients = 4;
using Vector = std::array<double, kCoefficients>;

// The names by which an error message refers to each feature (and its coefficient).
constexpr std::array<const char*, kCoefficients> kFeatureNames = {
    "base (constant term)", "prefill tokens", "decode sequences", "KV tokens"};

Vector features(const BatchShape& batch) {
  return {1.0, static_cast<double>(batch.prefill_tokens), static_cast<double>(batch.decode_seqs),
          static_cast<double>(batch.decode_context_tokens + batch.prefill_context_tokens)};
}

LinearCostCoefficients to_coefficients(const Vector& x) {
  LinearCostCoefficients c;
  c.base_s = x[0];
  c.per_prefill_token_s = x[1];
  c.per_decode_seq_s = x[2];
  c.per_kv_token_s = x[3];
  return c;
}

void check_samples(std::span<const CostSample> samples) {
  if (samples.size() < kCoefficients) {
    throw std::invalid_argument("linear fit: needs at least " + std::to_string(kCoefficients) +
                                " samples (one per coefficient), got " +
                                std::to_string(samples.size()));
  }
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const BatchShape& b = samples[i].batch;
    if (b.prefill_tokens < 0 || b.prefill_seqs < 0 || b.prefill_context_tokens < 0 ||
        b.decode_seqs < 0 || b.decode_context_tokens < 0) {
      throw std::invalid_argument("linear fit: sample " + std::to_string(i) +
                                  " has a negative count in its batch");
    }
    const double s = samples[i].seconds;
    if (!(s > 0.0 && std::isfinite(s))) {
      throw std::invalid_argument("linear fit: sample " + std::to_string(i) + " has time " +
                                  std::to_string(s) + " s; expected a finite number > 0");
    }
  }
}

// Why a least-squares system could not be solved.
struct Unsolvable {
  std::string reason;
};

// Least squares over the features in `active` (the others priced at zero). Columns are scaled by
// their largest magnitude before forming the normal equations so that the 4 x 4 system is
// well conditioned although KV tokens run to millions and the constant feature is 1; the
// system is then solved by Gaussian elimination with partial pivoting.
std::optional<Vector> solve_least_squares(std::span<const CostSample> samples,
                                          const std::array<bool, kCoefficients>& active,
                                          Unsolvable* why) {
  std::array<int, kCoefficients> index{};  // active column -> feature
  int m = 0;
  for (int j = 0; j < kCoefficients; ++j) {
    if (active[j]) index[m++] = j;
  }
  Vector scale{};
  for (const CostSample& sample : samples) {
    const Vector x = features(sample.batch);
    for (int k = 0; k < m; ++k) scale[k] = std::max(scale[k], std::abs(x[index[k]]));
  }
  for (int k = 0; k < m; ++k) {
    if (scale[k] == 0.0) {
      if (why) {
        why->reason = std::string("no sample has any ") + kFeatureNames[index[k]] +
                      ", so its coefficient is undetermined";
      }
      return std::nullopt;
    }
  }

  // Augmented normal equations [A | b] with A = Xs^T Xs and b = Xs^T y.
  std::array<std::array<double, kCoefficients + 1>, kCoefficients> system{};
  for (const CostSample& sample : samples) {
    const Vector x = features(sample.batch);
    Vector xs{};
    for (int k = 0; k < m; ++k) xs[k] = x[index[k]] / scale[k];
    for (int r = 0; r < m; ++r) {
      for (int c = 0; c < m; ++c) system[r][c] += xs[r] * xs[c];
      system[r][m] += xs[r] * sample.seconds;
    }
  }
  double largest_diagonal = 0;
  for (int r = 0; r < m; ++r) largest_diagonal = std::max(largest_diagonal, system[r][r]);
  // Pivots this small relative to the matrix are rounding noise of an exact dependence.
  const double singular_pivot = 1e-11 * largest_diagonal;

  for (int col = 0; col < m; ++col) {
    int pivot = col;
    for (int r = col + 1; r < m; ++r) {
      if (std::abs(system[r][col]) > std::abs(system[pivot][col])) pivot = r;
    }
    if (!(std::abs(system[pivot][col]) > singular_pivot)) {
      if (why) {
        why->reason = std::string("the samples' features are linearly dependent (") +
                      kFeatureNames[index[col]] +
                      " is a combination of the others in every sample, e.g. every decoding "
                      "sequence has the same context); vary prefill tokens, decode sequences and "
                      "KV tokens independently";
      }
      return std::nullopt;
    }
    std::swap(system[col], system[pivot]);
    for (int r = col + 1; r < m; ++r) {
      const double factor = system[r][col] / system[col][col];
      for (int c = col; c <= m; ++c) system[r][c] -= factor * system[col][c];
    }
  }
  Vector solution{};
  for (int r = m - 1; r >= 0; --r) {
    double value = system[r][m];
    for (int c = r + 1; c < m; ++c) value -= system[r][c] * solution[index[c]] * scale[c];
    solution[index[r]] = value / system[r][r] / scale[r];
  }
  return solution;
}

double sum_squared_residuals(const Vector& x, std::span<const CostSample> samples) {
  double sum = 0;
  const LinearCostCoefficients c = to_coefficients(x);
  for (const CostSample& sample : samples) {
    const double residual = c.seconds(sample.batch) - sample.seconds;
    sum += residual * residual;
  }
  return sum;
}

}  // namespace

LinearFit evaluate_linear_fit(const LinearCostCoefficients& coefficients,
                              std::span<const CostSample> samples) {
  LinearFit fit;
  fit.coefficients = coefficients;
  fit.sample_count = samples.size();
  if (samples.empty()) return fit;
  double mean = 0;
  for (const CostSample& sample : samples) mean += sample.seconds;
  mean /= static_cast<double>(samples.size());
  double residual_sum = 0;
  double total_sum = 0;
  for (const CostSample& sample : samples) {
    const double predicted = coefficients.seconds(sample.batch);
    const double residual = predicted - sample.seconds;
    residual_sum += residual * residual;
    total_sum += (sample.seconds - mean) * (sample.seconds - mean);
    fit.max_relative_error =
        std::max(fit.max_relative_error, std::abs(residual) / std::abs(sample.seconds));
  }
  // All times equal: R^2 is 1 when the fit reproduces them, else undefined (reported as 0).
  if (total_sum > 0.0) {
    fit.r_squared = 1.0 - residual_sum / total_sum;
  } else {
    fit.r_squared =
        residual_sum <= 1e-24 * mean * mean * static_cast<double>(samples.size()) ? 1.0 : 0.0;
  }
  return fit;
}

LinearFit fit_linear_cost_model(std::span<const CostSample> samples) {
  check_samples(samples);
  Unsolvable why;
  const std::optional<Vector> solution =
      solve_least_squares(samples, {true, true, true, true}, &why);
  if (!solution) throw std::invalid_argument("linear fit: " + why.reason);
  return evaluate_linear_fit(to_coefficients(*solution), samples);
}

LinearFit fit_linear_cost_model_non_negative(std::span<const CostSample> samples) {
  check_samples(samples);
  std::optional<Vector> best;
  double best_residuals = std::numeric_limits<double>::infinity();
  for (unsigned subset = 1; subset < (1u << kCoefficients); ++subset) {
    std::array<bool, kCoefficients> active{};
    for (int j = 0; j < kCoefficients; ++j) active[j] = ((subset >> j) & 1u) != 0;
    const std::optional<Vector> solution = solve_least_squares(samples, active, nullptr);
    if (!solution) continue;
    bool non_negative = true;
    for (double coefficient : *solution) non_negative = non_negative && coefficient >= 0.0;
    if (!non_negative) continue;
    const double residuals = sum_squared_residuals(*solution, samples);
    if (residuals < best_residuals) {
      best_residuals = residuals;
      best = solution;
    }
  }
  // The constant-only subset always solves with a positive mean time, so `best` is set.
  if (!best) throw std::invalid_argument("linear fit: no non-negative solution");
  return evaluate_linear_fit(to_coefficients(*best), samples);
}

std::vector<CostSample> sample_cost_model_grid(const CostModel& model, const CostSampleGrid& grid) {
  auto check_non_negative = [](const std::vector<int32_t>& values, const char* name) {
    for (int32_t v : values) {
      if (v < 0) {
        throw std::invalid_argument(std::string("cost sample grid: ") + name +
                                    " must be >= 0, got " + std::to_string(v));
      }
    }
  };
  check_non_negative(grid.decode_seqs, "decode_seqs");
  check_non_negative(grid.context_tokens, "context_tokens");
  check_non_negative(grid.prefill_chunk_tokens, "prefill_chunk_tokens");
  check_non_negative(grid.prefill_context_tokens, "prefill_context_tokens");

  // A dimension whose count is zero takes one pass with a zero context instead of repeating the
  // same batch once per context.
  static const std::vector<int32_t> kZeroOnly = {0};
  std::vector<CostSample> samples;
  for (int32_t decode_seqs : grid.decode_seqs) {
    for (int32_t context : decode_seqs == 0 ? kZeroOnly : grid.context_tokens) {
      for (int32_t chunk : grid.prefill_chunk_tokens) {
        for (int32_t chunk_context : chunk == 0 ? kZeroOnly : grid.prefill_context_tokens) {
          BatchShape batch;
          batch.decode_seqs = decode_seqs;
          batch.decode_context_tokens = static_cast<int64_t>(decode_seqs) * context;
          batch.prefill_tokens = chunk;
          batch.prefill_seqs = chunk > 0 ? 1 : 0;
          batch.prefill_context_tokens = chunk_context;
          if (batch.empty()) continue;
          if (grid.max_kv_tokens > 0 &&
              batch.decode_context_tokens + batch.prefill_context_tokens > grid.max_kv_tokens) {
            continue;
          }
          samples.push_back({batch, to_seconds(model.iteration_time(batch))});
        }
      }
    }
  }
  return samples;
}

}  // namespace gangway
