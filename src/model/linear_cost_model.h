// A cost model that is linear in the batch's size: a fixed per-iteration cost plus a price per
// prefill token, per decoding sequence and per KV token read. It is the shape that engine
// profilers (Vidur, Splitwise, DistServe) fit to measured step times, so real GPU timings can be
// dropped in as four numbers; linear_fit.h fits it to samples from measurements or from the
// roofline. Unlike the roofline it adds the compute and memory costs instead of overlapping
// them, so it is only as good as the range it was fitted on. Immutable and thread-safe.
#pragma once

#include "core/model_spec.h"
#include "model/cost_model.h"

namespace gangway {

// t = base_s + per_prefill_token_s x prefill_tokens + per_decode_seq_s x decode_seqs
//     + per_kv_token_s x (decode_context_tokens + prefill_context_tokens)
struct LinearCostCoefficients {
  double base_s = 0;
  double per_prefill_token_s = 0;
  double per_decode_seq_s = 0;
  double per_kv_token_s = 0;

  static LinearCostCoefficients from_spec(const CostModelSpec& cost);
  // Sets cost.kind to kLinear and its four linear_* fields; leaves the other fields alone.
  void write_to(CostModelSpec& cost) const;
  // The formula above, unrounded.
  double seconds(const BatchShape& batch) const {
    return base_s + per_prefill_token_s * batch.prefill_tokens +
           per_decode_seq_s * batch.decode_seqs +
           per_kv_token_s *
               static_cast<double>(batch.decode_context_tokens + batch.prefill_context_tokens);
  }
};

class LinearCostModel final : public CostModel {
 public:
  // Throws std::invalid_argument as validate() does.
  explicit LinearCostModel(const LinearCostCoefficients& coefficients);

  // Each coefficient finite and >= 0 (so that a bigger batch never runs faster), and their sum
  // > 0 (so that no iteration is free and time always advances). Throws
  // std::invalid_argument naming the CostModelSpec field (e.g. "cost.linear_per_kv_token_s").
  static void validate(const LinearCostCoefficients& coefficients);

  Duration iteration_time(const BatchShape& batch) const override;
  CostModelKind kind() const override { return CostModelKind::kLinear; }

  const LinearCostCoefficients& coefficients() const { return coefficients_; }

 private:
  LinearCostCoefficients coefficients_;
};

}  // namespace gangway
