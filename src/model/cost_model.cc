#include "model/cost_model.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/constant_cost_model.h"
#include "model/field_checks.h"
#include "model/linear_cost_model.h"
#include "model/roofline_cost_model.h"

namespace gangway {

void check_batch_shape(const BatchShape& batch) {
  if (is_valid_batch_shape(batch)) return;
  if (batch.empty()) throw std::logic_error("iteration_time: empty batch");
  if (batch.prefill_tokens < 0 || batch.prefill_seqs < 0 || batch.prefill_context_tokens < 0 ||
      batch.decode_seqs < 0 || batch.decode_context_tokens < 0) {
    throw std::logic_error("iteration_time: negative count in batch");
  }
  if ((batch.prefill_tokens > 0) != (batch.prefill_seqs > 0)) {
    throw std::logic_error("iteration_time: prefill tokens and prefill sequences disagree (" +
                           std::to_string(batch.prefill_tokens) + " tokens, " +
                           std::to_string(batch.prefill_seqs) + " sequences)");
  }
  if (batch.prefill_seqs > batch.prefill_tokens) {
    throw std::logic_error("iteration_time: more prefill sequences than prefill tokens");
  }
  throw std::logic_error("iteration_time: invalid batch");
}

void validate_cost_model_inputs(const ModelSpec& spec, const HardwareSpec& hardware) {
  field_checks::require_at_least("tensor_parallel", 1, spec.tensor_parallel);
  field_checks::require_at_least("prefill_chunk_tokens", 1, spec.prefill_chunk_tokens);
  switch (spec.cost.kind) {
    case CostModelKind::kRoofline:
      RooflineCostModel::validate(spec, hardware);
      return;
    case CostModelKind::kLinear:
      LinearCostModel::validate(LinearCostCoefficients::from_spec(spec.cost));
      return;
    case CostModelKind::kConstant:
      ConstantCostModel::validate(spec.cost.constant_iteration_s);
      return;
  }
  throw std::invalid_argument("cost.kind: expected roofline, linear or constant, got " +
                              std::to_string(static_cast<int>(spec.cost.kind)));
}

std::unique_ptr<CostModel> make_cost_model(const ModelSpec& spec, const HardwareSpec& hardware) {
  validate_cost_model_inputs(spec, hardware);
  switch (spec.cost.kind) {
    case CostModelKind::kRoofline:
      return std::make_unique<RooflineCostModel>(spec, hardware);
    case CostModelKind::kLinear:
      return std::make_unique<LinearCostModel>(LinearCostCoefficients::from_spec(spec.cost));
    case CostModelKind::kConstant:
      return std::make_unique<ConstantCostModel>(spec.cost.constant_iteration_s);
  }
  return nullptr;  // unreachable: validate_cost_model_inputs rejected the kind
}

Duration prefill_time(const CostModel& cost, const ModelSpec& spec, int32_t new_tokens,
                      int32_t cached_tokens) {
  if (cached_tokens < 0) {
    throw std::invalid_argument("prefill_time: cached_tokens must be >= 0, got " +
                                std::to_string(cached_tokens));
  }
  field_checks::require_at_least("prefill_chunk_tokens", 1, spec.prefill_chunk_tokens);
  Duration total{0};
  BatchShape chunk;
  chunk.prefill_seqs = 1;
  for (int32_t done = 0; done < new_tokens; done += chunk.prefill_tokens) {
    chunk.prefill_tokens = std::min(spec.prefill_chunk_tokens, new_tokens - done);
    chunk.prefill_context_tokens = static_cast<int64_t>(cached_tokens) + done;
    total += cost.iteration_time(chunk);
  }
  return total;
}

double lone_chunk_prefill_seconds_per_token(const CostModel& cost, const ModelSpec& spec) {
  field_checks::require_at_least("prefill_chunk_tokens", 1, spec.prefill_chunk_tokens);
  BatchShape chunk;
  chunk.prefill_tokens = spec.prefill_chunk_tokens;
  chunk.prefill_seqs = 1;
  return to_seconds(cost.iteration_time(chunk)) / spec.prefill_chunk_tokens;
}

Duration lone_decode_step(const CostModel& cost) {
  BatchShape step;
  step.decode_seqs = 1;
  step.decode_context_tokens = 1;
  return cost.iteration_time(step);
}

Duration kv_swap_time(const ModelSpec& spec, const HardwareSpec& hardware, int64_t tokens) {
  if (!(hardware.pcie_bytes_per_s > 0.0)) {
    field_checks::reject("hardware.pcie_bytes_per_s", "a finite number > 0",
                         hardware.pcie_bytes_per_s);
  }
  field_checks::require_at_least("tensor_parallel", 1, spec.tensor_parallel);
  if (tokens <= 0) return Duration::zero();
  const double bytes =
      static_cast<double>(tokens) * static_cast<double>(spec.kv_bytes_per_token_per_gpu());
  return seconds_to_duration(bytes / hardware.pcie_bytes_per_s);
}

}  // namespace gangway
