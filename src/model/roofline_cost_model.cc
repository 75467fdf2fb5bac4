#include "model/roofline_cost_model.h"

#include <cmath>
#include <string>

#include "model/field_checks.h"

namespace gangway {
namespace {

// All-reduces per transformer layer under Megatron-style tensor parallelism: one after the
// attention output projection, one after the MLP down projection.
constexpr double kAllReducesPerLayer = 2.0;

}  // namespace

void RooflineCostModel::validate(const ModelSpec& spec, const HardwareSpec& hardware) {
  using field_checks::reject;
  using field_checks::require_at_least;
  using field_checks::require_fraction;
  using field_checks::require_non_negative;
  using field_checks::require_positive;
  require_fraction("cost.compute_efficiency", spec.cost.compute_efficiency);
  require_fraction("cost.bandwidth_efficiency", spec.cost.bandwidth_efficiency);
  require_non_negative("cost.launch_overhead_s", spec.cost.launch_overhead_s);
  require_at_least("tensor_parallel", 1, spec.tensor_parallel);

  const ModelShape& shape = spec.shape;
  require_positive("shape.layers", shape.layers);
  require_positive("shape.hidden", shape.hidden);
  require_positive("shape.q_heads", shape.q_heads);
  require_positive("shape.kv_heads", shape.kv_heads);
  if (shape.kv_heads > shape.q_heads) {
    reject("shape.kv_heads", "at most shape.q_heads (" + std::to_string(shape.q_heads) + ")",
           shape.kv_heads);
  }
  require_positive("shape.head_dim", shape.head_dim);
  require_positive("shape.parameters", shape.parameters);
  require_positive("shape.dtype_bytes", shape.dtype_bytes);
  if (shape.is_moe()) {
    require_at_least("shape.experts_per_token", 1, shape.experts_per_token);
    if (shape.experts_per_token >= shape.experts) {
      reject("shape.experts_per_token",
             "fewer than shape.experts (" + std::to_string(shape.experts) + ")",
             shape.experts_per_token);
    }
    require_positive("shape.active_parameters", shape.active_parameters);
    if (shape.shared_parameters() < 0 || shape.active_parameters >= shape.parameters) {
      reject("shape.active_parameters",
             "below shape.parameters and at least experts_per_token / experts of the expert part",
             shape.active_parameters);
    }
  }

  require_positive("hardware.hbm_bytes_per_s", hardware.hbm_bytes_per_s);
  require_positive("hardware.bf16_flops_per_s", hardware.bf16_flops_per_s);
  if (spec.tensor_parallel > 1) {
    require_non_negative("hardware.allreduce_latency_s", hardware.allreduce_latency_s);
    require_positive("hardware.allreduce_bytes_per_s", hardware.allreduce_bytes_per_s);
  }
}

RooflineCostModel::RooflineCostModel(const ModelSpec& spec, const HardwareSpec& hardware) {
  validate(spec, hardware);
  const ModelShape& shape = spec.shape;
  const double tp = spec.tensor_parallel;
  const double effective_flops_per_s = hardware.bf16_flops_per_s * spec.cost.compute_efficiency;
  const double effective_bytes_per_s = hardware.hbm_bytes_per_s * spec.cost.bandwidth_efficiency;

  launch_overhead_s_ = spec.cost.launch_overhead_s;
  compute_s_per_token_ = 2.0 * shape.parameters_per_token() / tp / effective_flops_per_s;
  compute_s_per_attended_pair_ = 4.0 * shape.layers * static_cast<double>(shape.q_heads) *
                                 shape.head_dim / tp / effective_flops_per_s;
  memory_s_for_weights_ = shape.weight_bytes() / tp / effective_bytes_per_s;
  if (shape.is_moe()) {
    moe_ = true;
    memory_s_for_shared_weights_ =
        shape.shared_parameters() * shape.dtype_bytes / tp / effective_bytes_per_s;
    memory_s_for_all_experts_ =
        shape.experts * shape.expert_parameters() * shape.dtype_bytes / tp / effective_bytes_per_s;
    expert_miss_share_ = 1.0 - static_cast<double>(shape.experts_per_token) / shape.experts;
  }
  memory_s_per_kv_token_ =
      static_cast<double>(shape.kv_bytes_per_token()) / tp / effective_bytes_per_s;
  if (spec.tensor_parallel > 1) {
    const double allreduces = kAllReducesPerLayer * shape.layers;
    tp_comm_s_fixed_ = allreduces * hardware.allreduce_latency_s;
    tp_comm_s_per_token_ = allreduces * static_cast<double>(shape.hidden) * shape.dtype_bytes /
                           hardware.allreduce_bytes_per_s;
  }
}

double RooflineCostModel::attended_token_pairs(const BatchShape& batch) {
  const double prefill_tokens = batch.prefill_tokens;
  // A chunk without a sequence count is a caller bug (check_batch_shape catches it in checked
  // builds); counting it as one sequence keeps release builds finite.
  const double prefill_seqs = std::max(batch.prefill_seqs, 1);
  const double prefill_pairs =
      prefill_tokens * (static_cast<double>(batch.prefill_context_tokens) + 0.5 * prefill_tokens) /
      prefill_seqs;
  return prefill_pairs + static_cast<double>(batch.decode_context_tokens);
}

RooflineCostModel::Breakdown RooflineCostModel::breakdown(const BatchShape& batch) const {
  const double tokens = batch.total_tokens();
  const double kv_tokens_read =
      static_cast<double>(batch.decode_context_tokens + batch.prefill_context_tokens);
  Breakdown parts;
  parts.launch_overhead_s = launch_overhead_s_;
  parts.compute_s =
      tokens * compute_s_per_token_ + attended_token_pairs(batch) * compute_s_per_attended_pair_;
  double weights_s = memory_s_for_weights_;
  if (moe_) {
    const double touched = 1.0 - std::pow(expert_miss_share_, tokens);
    weights_s = memory_s_for_shared_weights_ + memory_s_for_all_experts_ * touched;
  }
  parts.memory_s = weights_s + (kv_tokens_read + tokens) * memory_s_per_kv_token_;
  parts.tp_comm_s = tp_comm_s_fixed_ + tokens * tp_comm_s_per_token_;
  return parts;
}

Duration RooflineCostModel::iteration_time(const BatchShape& batch) const {
#if defined(GANGWAY_CHECK_INVARIANTS)
  if (!is_valid_batch_shape(batch)) check_batch_shape(batch);
#endif
  return seconds_to_duration(iteration_seconds(batch));
}

}  // namespace gangway
