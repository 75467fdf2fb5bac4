// Predicts how long one engine iteration takes for a given batch. The simulator uses it as the
// only stand-in for a GPU; the emulated server backend sleeps for it; the scheduler uses it to
// predict waits and TTFT. Implementations: a roofline model derived from the model's shape and
// the hardware, a linear model with fitted coefficients, and a constant model for validating the
// simulator against queueing theory.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/time.h"

namespace gangway {

// The shape of one iteration's batch, summed over its sequences. Every count is per model
// instance (the whole gang for the large model; the cost model divides by TP itself).
struct BatchShape {
  // Prompt tokens computed this iteration (prefill chunks), and how many sequences they belong to.
  int32_t prefill_tokens = 0;
  int32_t prefill_seqs = 0;
  // Tokens already in the KV cache before each prefill chunk, summed over chunks: attention of a
  // chunk reads them (cached prefix hits and earlier chunks of the same prompt).
  int64_t prefill_context_tokens = 0;
  // Sequences decoding one token each, and the sum of their context lengths (KV read).
  int32_t decode_seqs = 0;
  int64_t decode_context_tokens = 0;

  int32_t total_tokens() const { return prefill_tokens + decode_seqs; }
  bool empty() const { return prefill_tokens == 0 && decode_seqs == 0; }
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Wall time of one iteration of this batch on the model's GPUs. REQUIRES: !batch.empty().
  virtual Duration iteration_time(const BatchShape& batch) const = 0;
  virtual CostModelKind kind() const = 0;
};

// Builds the cost model that spec.cost asks for.
std::unique_ptr<CostModel> make_cost_model(const ModelSpec& spec, const HardwareSpec& hardware);

// Time to prefill `new_tokens` prompt tokens on top of `cached_tokens` already in KV, alone on the
// model's GPUs, in chunks of spec.prefill_chunk_tokens (one iteration per chunk).
Duration prefill_time(const CostModel& cost, const ModelSpec& spec, int32_t new_tokens,
                      int32_t cached_tokens);

// Time to copy `tokens` tokens of KV between one GPU and host memory in one direction over PCIe.
// For a TP model each GPU moves its own shard in parallel, so this is per-GPU bytes / bandwidth.
Duration kv_swap_time(const ModelSpec& spec, const HardwareSpec& hardware, int64_t tokens);

}  // namespace gangway
