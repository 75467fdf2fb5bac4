#include "batching/engine_limits.h"

#include <cmath>
#include <string>

#include "core/input_error.h"

namespace gangway {

int64_t kv_blocks_for_memory_share(const ModelSpec& model, const HardwareSpec& hardware,
                                   double gpu_memory_utilization, int64_t activation_reserve_bytes,
                                   int32_t block_tokens) {
  if (!(gpu_memory_utilization > 0.0 && gpu_memory_utilization <= 1.0)) {
    throw InputError::at(
        "", std::nullopt, "--gpu-memory-utilization",
        "expected a fraction in (0, 1], got " + std::to_string(gpu_memory_utilization));
  }
  const double share = std::floor(static_cast<double>(hardware.hbm_bytes) * gpu_memory_utilization);
  const double kv_bytes =
      share - model.weight_bytes_per_gpu() - static_cast<double>(activation_reserve_bytes);
  const int64_t bytes_per_block = model.kv_bytes_per_token_per_gpu() * block_tokens;
  const int64_t blocks =
      kv_bytes > 0 && bytes_per_block > 0
          ? static_cast<int64_t>(std::floor(kv_bytes / static_cast<double>(bytes_per_block)))
          : 0;
  if (blocks < 1) {
    throw InputError::at(
        "", std::nullopt, "--gpu-memory-utilization",
        "no memory left for the KV cache: " + model.name + "'s weights per GPU (" +
            std::to_string(static_cast<int64_t>(model.weight_bytes_per_gpu() / 1e9)) +
            " GB) and the activation reserve do not fit in " +
            std::to_string(static_cast<int64_t>(share / 1e9)) + " GB of " + hardware.name +
            "; raise it or --tensor-parallel-size");
  }
  return blocks;
}

}  // namespace gangway
