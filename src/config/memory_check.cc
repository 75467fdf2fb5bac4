#include "config/memory_check.h"

#include <string>
#include <vector>

#include "kv/kv_layout.h"

namespace gangway {
namespace {

std::vector<std::string> models_on_gpu(const NodeSpec& node, int gpu) {
  std::vector<std::string> names;
  for (const ModelSpec& model : node.models) {
    for (const GpuId id : model.gpus) {
      if (id.value() == gpu) names.push_back(model.name);
    }
  }
  return names;
}

int failing_gpu(const NodeSpec& node) {
  for (int g = 0; g < node.gpu_count; ++g) {
    double weights = 0;
    for (const ModelSpec& model : node.models) {
      for (const GpuId id : model.gpus) {
        if (id.value() == g) weights += model.weight_bytes_per_gpu();
      }
    }
    if (weights + static_cast<double>(node.activation_reserve_bytes) >=
        static_cast<double>(node.hardware.hbm_bytes)) {
      return g;
    }
  }
  return 0;
}

void check_pools(const NodeSpec& node, const KvLayout& layout,
                 const std::vector<YamlValue>& items) {
  for (const ModelSpec& model : node.models) {
    const YamlValue& where = items[model.id.value()];
    if (model.is_large()) {
      if (layout.large_blocks < 1) {
        where.fail(
            "no room for even one KV block of the large model; raise "
            "scheduler.large_kv_fraction (and large_kv_fraction_min) or free HBM");
      }
      continue;
    }
    for (const GpuId gpu : model.gpus) {
      if (layout.small_blocks[gpu.value()][model.id.value()] < 1) {
        where.fail("no room for even one KV block on GPU " + std::to_string(gpu.value()) +
                   "; lower scheduler.large_kv_fraction (and large_kv_fraction_max) or free HBM");
      }
    }
  }
}

}  // namespace

void check_memory_layout(const NodeSpec& node, const SchedulerOptions& options,
                         const YamlValue& models) {
  KvLayout layout;
  try {
    layout = compute_kv_layout(node, options.large_kv_fraction);
  } catch (const InputError& e) {
    models.fail(std::string(e.what()) +
                " (models on that GPU: " + join_names(models_on_gpu(node, failing_gpu(node))) +
                "; lower node.activation_reserve_gb, place fewer models there, or use a GPU "
                "with more HBM)");
  }
  const std::vector<YamlValue> items = models.list();
  // With the dynamic split every pool must hold a block at both ends of its range too.
  std::vector<KvLayout> layouts = {layout};
  if (options.kv_split == KvSplit::kDynamic) {
    layouts.push_back(compute_kv_layout(node, options.large_kv_fraction_min));
    layouts.push_back(compute_kv_layout(node, options.large_kv_fraction_max));
  }
  for (const KvLayout& checked : layouts) check_pools(node, checked, items);
}

}  // namespace gangway
