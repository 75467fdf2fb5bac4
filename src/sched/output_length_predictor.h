// Predicts how many more tokens a request will generate, which nobody knows at arrival. Backfill
// (will this small request end before the gang's reservation?), routing (how long until this
// GPU is free?) and admission (can this request still meet its deadline?) all need it.
//
// Learned online, per model and per prompt-length bucket (powers of two), from the output
// lengths of requests that completed: a histogram of lengths in log-spaced bins (exact up to 16,
// then ~10 % wide). For a running request that has produced `a` tokens the prediction is the
// conditional residual E[L - a | L > a] (or its 20th or 90th percentile), bounded by max_tokens -
// a. Each bucket's residual table is rebuilt every few dozen observations, so a query is O(1).
// Buckets with few samples fall back to the model's pooled histogram, then to a geometric prior.
//
// An oracle variant reads the request's true length (RequestSpec::oracle_output_tokens) and is
// used only as a reference point in experiments.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/ids.h"
#include "sched/sequence.h"

namespace gangway {

class OutputLengthPredictor {
 public:
  // prior_mean_tokens: the mean assumed before anything is learned (memoryless prior).
  OutputLengthPredictor(int model_count, double prior_mean_tokens, bool oracle);

  // Tokens `seq` is still expected to generate (>= 1 while it runs, <= max_tokens - generated).
  double expected_remaining(const Sequence& seq) const;
  // The 90th percentile of the remaining tokens, for conservative reservations (backfill must
  // not often be wrong about a small request ending before the gang's reservation).
  double conservative_remaining(const Sequence& seq) const;
  // The 20th percentile of the remaining tokens: how soon the request may well end. For
  // deadlines that must hold even when it ends early (a small sequence's mean TPOT: one that
  // ends a few tokens after a long pause misses, whatever the mean remaining length said).
  double short_remaining(const Sequence& seq) const;

  // A request of this model and prompt length completed after `output_tokens` tokens.
  void observe(ModelId model, int32_t prompt_tokens, int32_t output_tokens);

  bool oracle() const { return oracle_; }
  int64_t observations(ModelId model) const;

  static constexpr int kPromptBuckets = 18;  // 0-1, 2-3, 4-7, ... 2^17 and up
  static constexpr int kLengthBins = 112;

 private:
  using QuantileTable = std::array<double, kLengthBins + 1>;
  struct Histogram {
    std::array<int64_t, kLengthBins> counts{};
    int64_t total = 0;
    int64_t since_rebuild = 0;
    // Rebuilt tables: for age bin i, E[L | L > lower(i)] and the count above it.
    std::array<double, kLengthBins + 1> mean_above{};
    std::array<int64_t, kLengthBins + 1> count_above{};
    // For an age in bin i, the p90 and p20 of the remaining length: the upper edge of the bin
    // holding that quantile of the lengths above i, less bin i's lower edge.
    QuantileTable p90_remaining{};
    QuantileTable p20_remaining{};
    bool built = false;
  };

  static int prompt_bucket(int32_t prompt_tokens);
  // The length bin of a token count; counts up to kTabulatedTokens (nearly every query: a
  // request's age in tokens) read it from a table filled once by the search.
  int length_bin(int64_t tokens) const {
    if (tokens >= 0 && tokens <= kTabulatedTokens)
      return tabulated_bins_[static_cast<size_t>(tokens)];
    return searched_length_bin(tokens);
  }
  static int searched_length_bin(int64_t tokens);  // length_bin by binary search of the edges
  static double bin_lower(int bin);
  static double bin_upper(int bin);
  static void rebuild(Histogram& histogram);
  // table[i]: the upper edge of the bin holding the `quantile` of the lengths at or above bin i,
  // less bin i's lower edge.
  static void fill_quantile_table(const Histogram& histogram, double quantile,
                                  QuantileTable& table);
  // `quantile` of the remaining tokens, read from the histogram's precomputed `table` for it.
  double remaining_quantile(const Sequence& seq, double quantile,
                            QuantileTable Histogram::*table) const;
  const Histogram* histogram_for(const Sequence& seq) const;
  double bounded(const Sequence& seq, double remaining) const;

  static constexpr int64_t kTabulatedTokens = 4096;
  std::array<uint8_t, kTabulatedTokens + 1> tabulated_bins_{};
  double prior_mean_tokens_;
  bool oracle_;
  // per model: [pooled, bucket 0..kPromptBuckets-1]
  std::vector<std::array<Histogram, kPromptBuckets + 1>> histograms_;
};

}  // namespace gangway
