#include "sched/output_length_predictor.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace gangway {

namespace {

// Bins 0..15 hold exactly 1..16 tokens; bin 16 + k starts at 17 x 1.1^k.
constexpr int kExactBins = 16;
constexpr double kGrowth = 1.1;
constexpr int kMinSamples = 32;
constexpr int kRebuildEvery = 64;
// The quantiles used for conservative reservations (backfill) and for deadlines that must hold
// if a request ends early (small sequences' TPOT).
constexpr double kConservativeQuantile = 0.9;
constexpr double kShortQuantile = 0.2;

const std::array<double, OutputLengthPredictor::kLengthBins + 1>& bin_edges() {
  static const auto edges = [] {
    std::array<double, OutputLengthPredictor::kLengthBins + 1> e{};
    for (int i = 0; i <= OutputLengthPredictor::kLengthBins; ++i) {
      e[i] = i < kExactBins ? i + 1.0 : 17.0 * std::pow(kGrowth, i - kExactBins);
    }
    return e;
  }();
  return edges;
}

}  // namespace

OutputLengthPredictor::OutputLengthPredictor(int model_count, double prior_mean_tokens, bool oracle)
    : prior_mean_tokens_(std::max(1.0, prior_mean_tokens)),
      oracle_(oracle),
      histograms_(static_cast<size_t>(model_count)) {
  for (int64_t tokens = 0; tokens <= kTabulatedTokens; ++tokens) {
    tabulated_bins_[static_cast<size_t>(tokens)] =
        static_cast<uint8_t>(searched_length_bin(tokens));
  }
}

int OutputLengthPredictor::prompt_bucket(int32_t prompt_tokens) {
  const auto tokens = static_cast<uint32_t>(std::max(1, prompt_tokens));
  const int bucket = std::bit_width(tokens) - 1;
  return std::min(bucket, kPromptBuckets - 1);
}

double OutputLengthPredictor::bin_lower(int bin) {
  return bin_edges()[bin];
}
double OutputLengthPredictor::bin_upper(int bin) {
  return bin_edges()[bin + 1];
}

int OutputLengthPredictor::searched_length_bin(int64_t tokens) {
  const auto& edges = bin_edges();
  const auto it = std::upper_bound(edges.begin(), edges.end(),
                                   static_cast<double>(std::max<int64_t>(1, tokens)));
  const int bin = static_cast<int>(it - edges.begin()) - 1;
  return std::clamp(bin, 0, kLengthBins - 1);
}

void OutputLengthPredictor::rebuild(Histogram& histogram) {
  double sum = 0;
  int64_t count = 0;
  histogram.count_above[kLengthBins] = 0;
  histogram.mean_above[kLengthBins] = 0;
  for (int bin = kLengthBins - 1; bin >= 0; --bin) {
    const double mid = bin < kExactBins ? bin_lower(bin) : 0.5 * (bin_lower(bin) + bin_upper(bin));
    count += histogram.counts[bin];
    sum += mid * static_cast<double>(histogram.counts[bin]);
    histogram.count_above[bin] = count;
    histogram.mean_above[bin] = count > 0 ? sum / static_cast<double>(count) : 0.0;
  }
  fill_quantile_table(histogram, kConservativeQuantile, histogram.p90_remaining);
  fill_quantile_table(histogram, kShortQuantile, histogram.p20_remaining);
  histogram.since_rebuild = 0;
  histogram.built = true;
}

// For each start bin, the first bin at or after it by which `quantile` of the lengths at or above
// it are counted. That bin never moves left as the start moves right (the count wanted falls by
// at most what the start leaves behind), so one pass with two indexes fills the table: O(bins)
// per rebuild instead of a search from each start, O(bins^2).
void OutputLengthPredictor::fill_quantile_table(const Histogram& histogram, double quantile,
                                                QuantileTable& table) {
  int bin = 0;
  int64_t seen = histogram.counts[0];  // lengths in bins [start, bin]
  for (int start = 0; start < kLengthBins; ++start) {
    const auto wanted = static_cast<int64_t>(
        std::ceil(quantile * static_cast<double>(histogram.count_above[start])));
    while (seen < wanted && bin < kLengthBins - 1) seen += histogram.counts[++bin];
    table[start] = bin_upper(bin) - bin_lower(start);
    seen -= histogram.counts[start];
    if (bin == start && start + 1 < kLengthBins) seen = histogram.counts[++bin];
  }
}

void OutputLengthPredictor::observe(ModelId model, int32_t prompt_tokens, int32_t output_tokens) {
  if (model.value() >= histograms_.size()) return;
  const int bin = length_bin(output_tokens);
  for (Histogram* histogram : {&histograms_[model.value()][0],
                               &histograms_[model.value()][1 + prompt_bucket(prompt_tokens)]}) {
    ++histogram->counts[bin];
    ++histogram->total;
    if (++histogram->since_rebuild >= kRebuildEvery || histogram->total == kMinSamples) {
      rebuild(*histogram);
    }
  }
}

int64_t OutputLengthPredictor::observations(ModelId model) const {
  return model.value() < histograms_.size() ? histograms_[model.value()][0].total : 0;
}

const OutputLengthPredictor::Histogram* OutputLengthPredictor::histogram_for(
    const Sequence& seq) const {
  const auto& per_model = histograms_[seq.spec.model.value()];
  const Histogram& bucket = per_model[1 + prompt_bucket(seq.spec.prompt_tokens)];
  if (bucket.built && bucket.total >= kMinSamples) return &bucket;
  if (per_model[0].built && per_model[0].total >= kMinSamples) return &per_model[0];
  return nullptr;
}

double OutputLengthPredictor::bounded(const Sequence& seq, double remaining) const {
  const double cap = std::max(1, seq.spec.max_tokens - seq.generated_tokens);
  return std::clamp(remaining, 1.0, cap);
}

double OutputLengthPredictor::expected_remaining(const Sequence& seq) const {
  if (oracle_ && seq.spec.oracle_output_tokens) {
    return bounded(seq, *seq.spec.oracle_output_tokens - seq.generated_tokens);
  }
  const Histogram* histogram = histogram_for(seq);
  if (!histogram) return bounded(seq, prior_mean_tokens_);
  const int bin = length_bin(seq.generated_tokens + 1);
  if (histogram->count_above[bin] == 0) return bounded(seq, prior_mean_tokens_);
  // E[L | L >= a + 1] ~ E[L | L >= lower(bin)] shifted by how far a + 1 sits into its bin (exact
  // for memoryless lengths; off by under one bin width otherwise).
  return bounded(seq, histogram->mean_above[bin] - bin_lower(bin));
}

double OutputLengthPredictor::conservative_remaining(const Sequence& seq) const {
  return remaining_quantile(seq, kConservativeQuantile, &Histogram::p90_remaining);
}

double OutputLengthPredictor::short_remaining(const Sequence& seq) const {
  return remaining_quantile(seq, kShortQuantile, &Histogram::p20_remaining);
}

double OutputLengthPredictor::remaining_quantile(const Sequence& seq, double quantile,
                                                 QuantileTable Histogram::*table) const {
  if (oracle_ && seq.spec.oracle_output_tokens) {
    return bounded(seq, *seq.spec.oracle_output_tokens - seq.generated_tokens);
  }
  const Histogram* histogram = histogram_for(seq);
  const int start = length_bin(seq.generated_tokens + 1);
  if (!histogram || histogram->count_above[start] == 0) {
    // Memoryless prior: the quantile of a geometric residual with the prior mean.
    return bounded(seq, -std::log1p(-quantile) * prior_mean_tokens_);
  }
  return bounded(seq, (histogram->*table)[start]);
}

}  // namespace gangway
