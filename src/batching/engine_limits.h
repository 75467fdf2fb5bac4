// The limits a continuous-batching engine runs under, as vLLM's engine arguments name them, and
// how many KV blocks a GPU memory share holds for a model.
#pragma once

#include <cstdint>

#include "core/hardware_spec.h"
#include "core/model_spec.h"

namespace gangway {

struct EngineLimits {
  // KV cache capacity in blocks of block_tokens tokens each (per GPU; with tensor parallelism
  // every GPU holds its shard of the same blocks).
  int64_t kv_blocks = 0;
  int32_t block_tokens = 16;
  // Sequences in the running set at most (--max-num-seqs).
  int32_t max_num_seqs = 256;
  // Tokens computed in one iteration at most, decode and prefill chunks together
  // (--max-num-batched-tokens); a longer prompt is prefilled in chunks (chunked prefill).
  int32_t max_num_batched_tokens = 2048;
  // Prompt plus output tokens of one request at most (vLLM's max_model_len).
  int32_t max_model_len = 32768;
};

// What a memory share leaves for KV: each GPU gives gpu_memory_utilization of its HBM to the
// engine, which holds the model's weights (its 1/TP shard), an activation reserve, and KV for
// the rest. Blocks = KV bytes / (KV bytes per token per GPU x block_tokens), rounded down.
// Throws InputError naming --gpu-memory-utilization when nothing is left for one block.
int64_t kv_blocks_for_memory_share(const ModelSpec& model, const HardwareSpec& hardware,
                                   double gpu_memory_utilization, int64_t activation_reserve_bytes,
                                   int32_t block_tokens);

}  // namespace gangway
