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
  bool operator==(const BatchShape&) const = default;
};

// Whether `batch` meets iteration_time's precondition: not empty, no negative count, prefill
// tokens if and only if prefill sequences, and no more prefill sequences than prefill tokens.
inline bool is_valid_batch_shape(const BatchShape& batch) {
  return !batch.empty() && batch.prefill_tokens >= 0 && batch.prefill_seqs >= 0 &&
         batch.prefill_context_tokens >= 0 && batch.decode_seqs >= 0 &&
         batch.decode_context_tokens >= 0 &&
         (batch.prefill_tokens > 0) == (batch.prefill_seqs > 0) &&
         batch.prefill_seqs <= batch.prefill_tokens;
}

// Throws std::logic_error saying what is wrong when !is_valid_batch_shape(batch).
// Implementations call it from iteration_time in builds with GANGWAY_CHECK_INVARIANTS on; a bad
// batch is a scheduler bug, never bad user input.
void check_batch_shape(const BatchShape& batch);

// A cost model is immutable after construction and so safe to share between threads.
class CostModel {
 public:
  virtual ~CostModel() = default;
  // Wall time of one iteration of this batch on the model's GPUs. REQUIRES: !batch.empty().
  virtual Duration iteration_time(const BatchShape& batch) const = 0;
  virtual CostModelKind kind() const = 0;
};

// Checks everything make_cost_model needs from `spec` (and `hardware`, for the roofline) without
// building anything, so that the config layer can report every model's problems up front.
// Always: tensor_parallel >= 1, prefill_chunk_tokens >= 1. Then what the chosen kind reads:
// roofline: efficiencies in (0, 1], launch_overhead_s >= 0, positive shape fields, positive
// hardware rates; linear: non-negative finite coefficients with a positive sum; constant:
// constant_iteration_s > 0. Throws std::invalid_argument whose message starts with the field's
// name (e.g. "cost.compute_efficiency: ..."), so the caller can prefix the file and key path.
void validate_cost_model_inputs(const ModelSpec& spec, const HardwareSpec& hardware);

// Builds the cost model that spec.cost asks for, after validate_cost_model_inputs.
std::unique_ptr<CostModel> make_cost_model(const ModelSpec& spec, const HardwareSpec& hardware);

// Time to prefill `new_tokens` prompt tokens on top of `cached_tokens` already in KV, alone on the
// model's GPUs, in chunks of spec.prefill_chunk_tokens (one iteration per chunk). It is the sum
// of the chunks' iteration times, each chunk attending to the cached tokens plus the chunks
// before it, so it equals what a simulator running those iterations one by one would add up.
// Zero when new_tokens <= 0. Throws std::invalid_argument if cached_tokens < 0 or
// spec.prefill_chunk_tokens < 1. Costs one iteration_time call per chunk.
Duration prefill_time(const CostModel& cost, const ModelSpec& spec, int32_t new_tokens,
                      int32_t cached_tokens);

// Seconds of prefill per prompt token at the rate of one full chunk alone on the model's GPUs:
// the figure queue-wait estimates multiply queued prompt tokens by. One iteration_time call.
double lone_chunk_prefill_seconds_per_token(const CostModel& cost, const ModelSpec& spec);

// The shortest iteration the model runs: one decode step of one sequence over one context token
// (reading every weight once). One iteration_time call.
Duration lone_decode_step(const CostModel& cost);

// Time to copy `tokens` tokens of KV between one GPU and host memory in one direction over PCIe.
// For a TP model each GPU moves its own shard in parallel, so this is per-GPU bytes / bandwidth.
// Zero when tokens <= 0. Throws std::invalid_argument if hardware.pcie_bytes_per_s <= 0.
Duration kv_swap_time(const ModelSpec& spec, const HardwareSpec& hardware, int64_t tokens);

}  // namespace gangway
