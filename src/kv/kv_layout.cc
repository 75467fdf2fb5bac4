#include "kv/kv_layout.h"

#include <cmath>
#include <string>

#include "core/input_error.h"

namespace gangway {

KvLayout compute_kv_layout(const NodeSpec& node, double large_kv_fraction) {
  KvLayout layout;
  layout.gpus.resize(node.gpu_count);
  layout.small_blocks.assign(node.gpu_count, std::vector<int64_t>(node.models.size(), 0));
  const ModelSpec* large = node.large_model();
  if (!large) large_kv_fraction = 0.0;

  for (int g = 0; g < node.gpu_count; ++g) {
    GpuMemoryLayout& gpu = layout.gpus[g];
    gpu.hbm_bytes = node.hardware.hbm_bytes;
    gpu.activation_reserve_bytes = node.activation_reserve_bytes;
    gpu.small_kv_bytes.assign(node.models.size(), 0);
    int small_models_here = 0;
    for (const ModelSpec& model : node.models) {
      for (GpuId id : model.gpus) {
        if (id.value() != g) continue;
        gpu.weight_bytes += static_cast<int64_t>(std::llround(model.weight_bytes_per_gpu()));
        if (!model.is_large()) ++small_models_here;
      }
    }
    gpu.kv_bytes = gpu.hbm_bytes - gpu.weight_bytes - gpu.activation_reserve_bytes;
    if (gpu.kv_bytes <= 0) {
      throw InputError::at("", std::nullopt, "node.gpu[" + std::to_string(g) + "]",
                           "weights (" + std::to_string(gpu.weight_bytes / 1'000'000'000.0) +
                               " GB) plus activation reserve do not fit in " +
                               std::to_string(gpu.hbm_bytes / 1'000'000'000.0) +
                               " GB of HBM; expected room left for a KV pool");
    }
    gpu.large_kv_bytes = small_models_here == 0 && large
                             ? gpu.kv_bytes
                             : static_cast<int64_t>(gpu.kv_bytes * large_kv_fraction);
    const int64_t small_total = gpu.kv_bytes - gpu.large_kv_bytes;
    for (const ModelSpec& model : node.models) {
      if (model.is_large()) continue;
      for (GpuId id : model.gpus) {
        if (id.value() != g) continue;
        const int64_t bytes = small_total / small_models_here;
        gpu.small_kv_bytes[model.id.value()] = bytes;
        const int64_t bytes_per_block =
            model.kv_bytes_per_token_per_gpu() * static_cast<int64_t>(node.kv_block_tokens);
        layout.small_blocks[g][model.id.value()] = bytes / bytes_per_block;
      }
    }
  }
  if (large) {
    const int64_t bytes_per_block =
        large->kv_bytes_per_token_per_gpu() * static_cast<int64_t>(node.kv_block_tokens);
    int64_t min_bytes = -1;
    for (GpuId id : large->gpus) {
      const int64_t bytes = layout.gpus[id.value()].large_kv_bytes;
      if (min_bytes < 0 || bytes < min_bytes) min_bytes = bytes;
    }
    layout.large_blocks = min_bytes < 0 ? 0 : min_bytes / bytes_per_block;
  }
  return layout;
}

}  // namespace gangway
