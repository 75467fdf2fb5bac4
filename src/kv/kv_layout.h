// How each GPU's HBM is divided: weights of the large model's shard and of the small-model
// replicas placed there, an activation reserve, and what is left as KV pool, split between the
// large model's KV shard and the small models' KV. Computed once from the NodeSpec; a layout
// that does not fit (weights larger than the GPU) is an input error.
#pragma once

#include <cstdint>
#include <vector>

#include "core/node_spec.h"

namespace gangway {

struct GpuMemoryLayout {
  int64_t hbm_bytes = 0;
  int64_t weight_bytes = 0;
  int64_t activation_reserve_bytes = 0;
  int64_t kv_bytes = 0;        // everything left for KV
  int64_t large_kv_bytes = 0;  // this GPU's share reserved for the large model's KV shard
  // KV bytes for each small model placed on this GPU, indexed like NodeSpec::models
  // (zero for models without a replica here).
  std::vector<int64_t> small_kv_bytes;
};

struct KvLayout {
  std::vector<GpuMemoryLayout> gpus;
  // Blocks of the large model's pool (the same on every GPU of the gang; 0 without one).
  int64_t large_blocks = 0;
  // small_blocks[gpu][model]: blocks of each small model's pool on each GPU.
  std::vector<std::vector<int64_t>> small_blocks;
};

// large_kv_fraction: share of each GPU's KV memory given to the large model (static split).
// Throws InputError when weights and reserve exceed a GPU's memory.
KvLayout compute_kv_layout(const NodeSpec& node, double large_kv_fraction);

}  // namespace gangway
