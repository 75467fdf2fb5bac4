// Reads a scenario's `models:` list: each model's name, tier, shape (a preset or explicit
// dimensions), placement on GPUs, tensor parallelism, batching limits and cost model, and checks
// the placement rules the scheduler relies on: every model has a GPU, indices exist, at most one
// large model and it spans every GPU at TP = gpu count, small models run at TP = 1, prefill chunks
// are whole KV blocks, and there is at least one small model.
#pragma once

#include "config/yaml_reader.h"
#include "core/model_spec.h"
#include "core/node_spec.h"

namespace gangway {

// What a model of this tier is on this hardware when the file says nothing more:
// default_node_spec()'s batching limits for that tier, and the cost model the hardware's preset
// gives (default_cost_model: its roofline efficiencies); no name, shape or GPUs yet. A model's
// `cost:` section then overrides only the keys it sets.
ModelSpec default_model_for_tier(ModelTier tier, const HardwareSpec& hardware);

// Fills node.models (ids in list order). Reads node.gpu_count, hardware and kv_block_tokens,
// so the `node:` section must have been read first.
void read_models(const YamlValue& value, NodeSpec& node);

// `shape:` as a preset name ("llama-3-8b", "llama-3-70b") or a mapping {preset, and dimensions
// overriding the preset's}; without a preset every dimension but dtype_bytes is required.
// `model_name` names a custom shape.
ModelShape read_model_shape(const YamlValue& value, const std::string& model_name);

}  // namespace gangway
