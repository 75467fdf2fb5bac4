// The default cost model: an iteration's time from first principles, given only the model's shape
// and the GPU's datasheet figures (with efficiency factors for what engines actually achieve).
// It exists so that the simulator and the emulated server have believable step times for any
// model shape and batch, without GPU measurements; src/model/README.md holds the reference figures
// it is calibrated against and the numbers it gives.
//
//   time = launch_overhead + max(compute, memory) + tp_comm
//
// compute: linear-layer FLOPs 2 x parameters x tokens plus attention FLOPs
//   4 x layers x (q_heads x head_dim) x (attended token pairs), split over TP GPUs, at
//   bf16 peak x compute_efficiency (model FLOPs utilisation).
// memory: per-GPU weight bytes, plus the KV cache read by attention (decode and prefill
//   contexts) and written for every new token, at HBM peak x bandwidth_efficiency.
// tp_comm (TP > 1): two all-reduces per layer (after attention and after the MLP), each
//   latency + tokens x hidden x dtype bytes / all-reduce bandwidth. Not overlapped with compute,
//   as in vLLM's and TensorRT-LLM's tensor-parallel decode.
//
// Attended pairs for prefill. A chunk of n new tokens on top of c tokens already in KV attends to
// n x (c + n / 2) (query, key) pairs under the causal mask. BatchShape keeps only the sums over
// chunks (P tokens, C context, k chunks), so the model assumes k equal chunks:
// P x (C / k + P / (2 k)). That is exact for one chunk (the usual case: one prefill chunk per
// iteration) and for chunks of equal size whatever their contexts; with unequal sizes it
// undercounts the quadratic term (sum n^2 >= P^2 / k), by at most P^2 / 2 pairs.
// Decode: each sequence's one new token attends to its whole context (decode_context_tokens).
//
// Mixture of experts (docs/decisions/moe-cost-on-active-parameters.md): compute counts the
// parameters a token passes through (active parameters), and the weights read are the shared
// layers plus the experts the batch's tokens are routed to: with routing spread evenly, a batch
// of T tokens touches a share 1 - (1 - k / E)^T of each layer's E experts (k per token), so a
// single decode reads about the active weights and a large batch all of them.
//
// Not modelled: activations' memory traffic, the quadratic attention read of the chunk's own
// KV, kernel-level effects (tile quantisation, wave tails), sampling and CPU overheads beyond the
// fixed launch overhead. Immutable and thread-safe.
#pragma once

#include <algorithm>

#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "model/cost_model.h"

namespace gangway {

class RooflineCostModel final : public CostModel {
 public:
  // The terms of one iteration's time, in seconds, for tests, calibration reports and docs.
  struct Breakdown {
    double launch_overhead_s = 0;
    double compute_s = 0;
    double memory_s = 0;
    double tp_comm_s = 0;

    double total_s() const { return launch_overhead_s + std::max(compute_s, memory_s) + tp_comm_s; }
    bool compute_bound() const { return compute_s > memory_s; }
  };

  // Throws std::invalid_argument naming the field when an input is out of range (the roofline
  // part of validate_cost_model_inputs).
  RooflineCostModel(const ModelSpec& spec, const HardwareSpec& hardware);

  // Throws std::invalid_argument naming the first field out of range: spec.cost's efficiencies
  // and launch overhead, spec.tensor_parallel, spec.shape's fields, the hardware's rates.
  static void validate(const ModelSpec& spec, const HardwareSpec& hardware);

  Duration iteration_time(const BatchShape& batch) const override;
  CostModelKind kind() const override { return CostModelKind::kRoofline; }

  Breakdown breakdown(const BatchShape& batch) const;
  double iteration_seconds(const BatchShape& batch) const { return breakdown(batch).total_s(); }

  // (query, key) pairs that attention computes for this batch, as described above.
  static double attended_token_pairs(const BatchShape& batch);

 private:
  // Per-model constants, folded in the constructor so that an iteration costs a few
  // multiply-adds and one division (the simulator calls this millions of times per run).
  double launch_overhead_s_ = 0;
  double compute_s_per_token_ = 0;          // 2 x parameters / TP / effective FLOP/s
  double compute_s_per_attended_pair_ = 0;  // 4 x layers x q_heads x head_dim / TP / eff. FLOP/s
  double memory_s_for_weights_ = 0;         // weight bytes / TP / effective bandwidth
  // MoE: the weights every token reads, all experts' weights, and the share of experts a token
  // does not touch (1 - k / E); memory_s_for_weights_ is then unused.
  bool moe_ = false;
  double memory_s_for_shared_weights_ = 0;
  double memory_s_for_all_experts_ = 0;
  double expert_miss_share_ = 0;
  double memory_s_per_kv_token_ = 0;  // KV bytes per token / TP / effective bandwidth
  double tp_comm_s_fixed_ = 0;        // all-reduces per iteration x latency (0 at TP=1)
  double tp_comm_s_per_token_ = 0;    // all-reduces x hidden x dtype bytes / bandwidth
};

}  // namespace gangway
