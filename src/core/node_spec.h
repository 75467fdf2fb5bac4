// One server: its GPUs, the models placed on them, and the SLO classes it serves. Built once by
// the config layer (from YAML) and then read-only for the life of a run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/slo.h"

namespace gangway {

struct NodeSpec {
  int32_t gpu_count = 8;
  HardwareSpec hardware;
  int64_t host_memory_bytes = 1LL << 40;  // 1 TiB for swapped and evicted-but-kept KV
  // Per-GPU memory kept back for activations, CUDA graphs and the allocator's slack.
  int64_t activation_reserve_bytes = 4LL * 1000 * 1000 * 1000;
  // Tokens per paged KV block (vLLM's default is 16).
  int32_t kv_block_tokens = 16;
  std::vector<ModelSpec> models;
  std::vector<SloClass> slo_classes;

  const ModelSpec& model(ModelId id) const { return models[id.value()]; }
  const SloClass& slo_class(SloClassId id) const { return slo_classes[id.value()]; }
  // The node's large model, if it has one (at most one is allowed).
  const ModelSpec* large_model() const {
    for (const auto& m : models) {
      if (m.is_large()) return &m;
    }
    return nullptr;
  }
  std::optional<ModelId> find_model(std::string_view name) const {
    for (const auto& m : models) {
      if (m.name == name) return m.id;
    }
    return std::nullopt;
  }
  // Names in id order: the labels of per-model and per-class metrics, and the allowed values an
  // error message lists.
  std::vector<std::string> model_names() const;
  std::vector<std::string> slo_class_names() const;
  std::optional<SloClassId> find_slo_class(std::string_view name) const {
    for (const auto& c : slo_classes) {
      if (c.name == name) return c.id;
    }
    return std::nullopt;
  }
};

// The default node: 8 x H100 SXM 80 GB, a Llama-3-70B-shaped large model at TP=8 and a
// Llama-3-8B-shaped small model with one replica per GPU, the default SLO classes.
NodeSpec default_node_spec();

}  // namespace gangway
