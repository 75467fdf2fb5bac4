#include "server/emulated_output_length.h"

#include <algorithm>

namespace gangway {
namespace {

LengthSpec fallback_length() {
  LengthSpec spec;
  spec.kind = LengthSpec::Kind::geometric;
  spec.mean = 128;
  return spec;
}

}  // namespace

EmulatedOutputLength::EmulatedOutputLength(const Scenario& scenario, const EmulatedOutputSpec& rule)
    : kind_(rule.kind),
      class_count_(scenario.node.slo_classes.size()),
      rng_(Rng::for_stream(scenario.seed, 0x5e12e12ULL)) {
  const size_t models = scenario.node.models.size();
  sampler_by_pair_.assign(models * class_count_, 0);
  if (kind_ == EmulatedOutputSpec::Kind::kLength) {
    samplers_.emplace_back(rule.length);
    return;
  }
  samplers_.emplace_back(fallback_length());
  // One sampler per stream, so pairs that share a stream share its distribution.
  std::vector<size_t> by_stream;
  for (const StreamSpec& stream : scenario.streams) {
    by_stream.push_back(samplers_.size());
    samplers_.emplace_back(stream.output_tokens);
  }
  for (size_t m = 0; m < models; ++m) {
    for (size_t c = 0; c < class_count_; ++c) {
      size_t chosen = 0;
      for (size_t s = 0; s < scenario.streams.size() && chosen == 0; ++s) {
        const StreamSpec& stream = scenario.streams[s];
        if (stream.model.value() == m && stream.slo_class.value() == c) chosen = by_stream[s];
      }
      for (size_t s = 0; s < scenario.streams.size() && chosen == 0; ++s) {
        if (scenario.streams[s].model.value() == m) chosen = by_stream[s];
      }
      sampler_by_pair_[m * class_count_ + c] = chosen;
    }
  }
}

int32_t EmulatedOutputLength::choose(ModelId model, SloClassId slo_class, int32_t max_tokens,
                                     bool ignore_eos, std::optional<int32_t> min_tokens) {
  max_tokens = std::max<int32_t>(1, max_tokens);
  if (ignore_eos) return max_tokens;
  if (min_tokens) return std::clamp<int32_t>(*min_tokens, 1, max_tokens);
  if (kind_ == EmulatedOutputSpec::Kind::kMaxTokens) return max_tokens;
  const size_t index = kind_ == EmulatedOutputSpec::Kind::kLength
                           ? 0
                           : sampler_by_pair_[model.value() * class_count_ + slo_class.value()];
  return std::clamp<int32_t>(samplers_[index].sample(rng_), 1, max_tokens);
}

}  // namespace gangway
