// What a model is (its shape, hence its cost and KV footprint) and how the node runs it (tier,
// tensor parallelism, which GPUs hold a replica, batching limits). Plain data shared by every
// layer; the cost model and the KV pools derive their numbers from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/roofline_efficiencies.h"

namespace gangway {

// Small models run on one GPU each (TP=1); the large model runs on all GPUs at once (a gang).
enum class ModelTier : uint8_t { kSmall, kLarge };

const char* to_string(ModelTier tier);

// Transformer dimensions of a decoder-only model. Grouped-query attention: kv_heads <= q_heads.
struct ModelShape {
  std::string name;
  int32_t layers = 0;
  int32_t hidden = 0;
  int32_t q_heads = 0;
  int32_t kv_heads = 0;
  int32_t head_dim = 0;
  int32_t ffn = 0;
  double parameters = 0;    // total parameter count
  int32_t dtype_bytes = 2;  // bf16 weights and KV
  // Mixture of experts: each layer's MLP is `experts` experts, of which a token passes through
  // `experts_per_token`; `active_parameters` are the parameters one token passes through (the
  // shared layers and its experts). 0, 0, 0: a dense model.
  int32_t experts = 0;
  int32_t experts_per_token = 0;
  double active_parameters = 0;

  bool is_moe() const { return experts > 0; }
  // Parameters one token's forward pass multiplies by: all of them for a dense model.
  double parameters_per_token() const { return is_moe() ? active_parameters : parameters; }
  // MoE: the parameters of one expert over all layers, and of the parts every token uses.
  double expert_parameters() const {
    return is_moe() ? (parameters - active_parameters) / (experts - experts_per_token) : 0.0;
  }
  double shared_parameters() const { return parameters - experts * expert_parameters(); }
  double weight_bytes() const { return parameters * dtype_bytes; }
  // K and V for every layer: 2 x layers x kv_heads x head_dim x dtype bytes.
  int64_t kv_bytes_per_token() const { return 2LL * layers * kv_heads * head_dim * dtype_bytes; }
};

// Llama-3-8B and Llama-3-70B shapes (Meta's model cards and config.json files).
ModelShape llama3_8b_shape();
ModelShape llama3_70b_shape();

// How iteration time is predicted for a model; the model layer turns this into a CostModel.
enum class CostModelKind : uint8_t { kRoofline, kLinear, kConstant };

const char* to_string(CostModelKind kind);

struct CostModelSpec {
  CostModelKind kind = CostModelKind::kRoofline;
  // Roofline efficiency factors: achieved fraction of peak compute (model FLOPs utilisation) and
  // of peak HBM bandwidth, plus a fixed per-iteration overhead (kernel launches, sampling,
  // scheduling glue in the engine). default_cost_model() sets them from the GPU's preset.
  double compute_efficiency = RooflineEfficiencies{}.compute_efficiency;
  double bandwidth_efficiency = RooflineEfficiencies{}.bandwidth_efficiency;
  double launch_overhead_s = RooflineEfficiencies{}.launch_overhead_s;
  // Linear model: t = base + per_prefill_token * p + per_decode_seq * d + per_kv_token * k.
  double linear_base_s = 0;
  double linear_per_prefill_token_s = 0;
  double linear_per_decode_seq_s = 0;
  double linear_per_kv_token_s = 0;
  // Constant model: every iteration takes this long, whatever the batch (for validation).
  double constant_iteration_s = 0.01;
};

// The large model's compute efficiency on every GPU: the reference MFU of a 70B model at TP=8 is
// 0.35-0.45. A GPU preset's compute efficiency is a one-GPU (TP=1) figure, and no preset measures
// a TP=8 gang, so the preset does not move this one.
constexpr double kLargeModelComputeEfficiency = 0.4;

// The cost model a model of `tier` runs with on a GPU whose preset gives `efficiencies`, before
// the model's own cost settings: the roofline with those efficiencies, except that the large
// model's compute efficiency is kLargeModelComputeEfficiency.
CostModelSpec default_cost_model(ModelTier tier, const RooflineEfficiencies& efficiencies);

struct ModelSpec {
  ModelId id;
  std::string name;
  ModelTier tier = ModelTier::kSmall;
  ModelShape shape;
  int32_t tensor_parallel = 1;
  // GPUs holding a replica (small models: one replica per listed GPU) or the gang (large model:
  // every GPU of the node).
  std::vector<GpuId> gpus;
  int32_t max_context_tokens = 32768;
  // Continuous batching limits per iteration: at most max_num_seqs sequences and a token budget
  // of max_batched_tokens (decode tokens first, then prefill chunks of at most
  // prefill_chunk_tokens each).
  // Defaults keep an H100 iteration of the 8B model within the reference 5-15 ms
  // (one 256-token chunk is ~8 ms of compute at 50 % MFU); the large model's defaults
  // (default_node_spec) keep its iterations within 20-50 ms.
  int32_t max_num_seqs = 256;
  int32_t max_batched_tokens = 512;
  int32_t prefill_chunk_tokens = 256;
  CostModelSpec cost;

  bool is_large() const { return tier == ModelTier::kLarge; }
  // Weight bytes that each GPU of this model holds (its shard, or a whole replica).
  double weight_bytes_per_gpu() const { return shape.weight_bytes() / tensor_parallel; }
  int64_t kv_bytes_per_token_per_gpu() const {
    return shape.kv_bytes_per_token() / tensor_parallel;
  }
};

}  // namespace gangway
