#include "config/model_config.h"

#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/cost_config.h"
#include "config/model_presets.h"
#include "model/cost_model.h"

namespace gangway {
namespace {

// experts, experts_per_token and active_parameters_b: a mixture of experts, all three or none
// (a preset's may be overridden one by one; experts: 0 makes the shape dense).
void read_experts(const YamlMap& map, ModelShape& shape) {
  if (const auto v = map.get("experts"))
    shape.experts = static_cast<int32_t>(v->integer_in(0, 4096));
  if (const auto v = map.get("experts_per_token")) shape.experts_per_token = v->int32_at_least(1);
  if (const auto v = map.get("active_parameters_b")) {
    shape.active_parameters = v->positive_number() * 1e9;
  }
  const YamlValue where = map.get("experts").value_or(
      map.get("experts_per_token").value_or(map.get("active_parameters_b").value_or(map.self())));
  if (shape.experts == 0) {
    if (map.has("experts_per_token") || map.has("active_parameters_b")) {
      where.fail(
          "expected experts (> 1) with experts_per_token and active_parameters_b: they "
          "describe a mixture of experts");
    }
    shape.experts_per_token = 0;
    shape.active_parameters = 0;
    return;
  }
  if (shape.experts < 2 || shape.experts_per_token < 1 ||
      shape.experts_per_token >= shape.experts) {
    where.fail("expected experts >= 2 and 1 <= experts_per_token < experts, got experts " +
               std::to_string(shape.experts) + " and experts_per_token " +
               std::to_string(shape.experts_per_token));
  }
  const double least_active =
      shape.parameters * shape.experts_per_token / static_cast<double>(shape.experts);
  if (!(shape.active_parameters >= least_active && shape.active_parameters < shape.parameters)) {
    where.fail("expected active_parameters_b from " + format_number(least_active / 1e9) +
               " (experts_per_token / experts of parameters_b) up to parameters_b (" +
               format_number(shape.parameters / 1e9) + "), got " +
               format_number(shape.active_parameters / 1e9));
  }
}

ModelShape shape_preset(const YamlValue& value) {
  const std::string name = value.text();
  if (std::optional<ModelShape> shape = find_shape_preset(name)) return *shape;
  value.fail("unknown model shape preset " + in_quotes(name) + "; expected one of: " +
             join_names(shape_preset_names()) + ", or a mapping of dimensions");
}

std::vector<GpuId> read_gpus(const YamlValue& value, int32_t gpu_count) {
  std::vector<GpuId> gpus;
  if (value.is_scalar()) {
    if (value.text() != "all") {
      value.fail("expected 'all' or a list of GPU indices, got " + value.describe());
    }
    for (int32_t g = 0; g < gpu_count; ++g) gpus.emplace_back(static_cast<uint16_t>(g));
    return gpus;
  }
  for (const YamlValue& item : value.list()) {
    const int64_t index = item.integer();
    if (index < 0 || index >= gpu_count) {
      item.fail("GPU index out of range: expected 0 to " + std::to_string(gpu_count - 1) +
                " (node.gpus is " + std::to_string(gpu_count) + "), got " + std::to_string(index));
    }
    for (const GpuId seen : gpus) {
      if (seen.value() == index) item.fail("GPU " + std::to_string(index) + " is listed twice");
    }
    gpus.emplace_back(static_cast<uint16_t>(index));
  }
  if (gpus.empty()) {
    value.fail("expected at least one GPU: a model without a GPU has no replica to run on");
  }
  return gpus;
}

void check_heads_split(const ModelSpec& model, const YamlValue& where) {
  if (model.shape.q_heads % model.tensor_parallel != 0) {
    where.fail("expected the shape's q_heads (" + std::to_string(model.shape.q_heads) +
               ") to be divisible by tensor_parallel (" + std::to_string(model.tensor_parallel) +
               "): attention heads are split evenly across the GPUs");
  }
}

// gpus (default: all) and tensor_parallel (default: 1 for small, the node's GPU count for
// large), with the rules of each tier.
void read_placement(const YamlMap& map, const NodeSpec& node, ModelSpec& model) {
  const auto gpus = map.get("gpus");
  if (gpus) {
    model.gpus = read_gpus(*gpus, node.gpu_count);
  } else {
    for (int32_t g = 0; g < node.gpu_count; ++g) model.gpus.emplace_back(static_cast<uint16_t>(g));
  }
  const YamlValue placement = gpus.value_or(map.self());
  const bool large = model.is_large();
  if (large && static_cast<int32_t>(model.gpus.size()) != node.gpu_count) {
    placement.fail("expected a large model to span every GPU of the node (gpus: all, " +
                   std::to_string(node.gpu_count) + " GPUs), got " +
                   std::to_string(model.gpus.size()));
  }

  model.tensor_parallel = large ? node.gpu_count : 1;
  if (const auto tp = map.get("tensor_parallel")) {
    model.tensor_parallel = tp->int32_at_least(1);
    if (large && model.tensor_parallel != node.gpu_count) {
      tp->fail("expected a large model's tensor_parallel to equal node.gpus (" +
               std::to_string(node.gpu_count) + "), got " + std::to_string(model.tensor_parallel));
    }
    if (!large && model.tensor_parallel != 1) {
      tp->fail("expected 1 for a small model (one single-GPU replica per listed GPU), got " +
               std::to_string(model.tensor_parallel) + "; a model spanning GPUs is tier: large");
    }
  }
}

// max_context_tokens, max_num_seqs, max_batched_tokens and prefill_chunk_tokens (whole KV
// blocks, so that a chunk never ends inside a block).
void read_batching_limits(const YamlMap& map, const NodeSpec& node, ModelSpec& model) {
  const YamlValue& item = map.self();
  if (const auto v = map.get("max_context_tokens")) model.max_context_tokens = v->int32_at_least(1);
  if (const auto v = map.get("max_num_seqs")) model.max_num_seqs = v->int32_at_least(1);
  if (const auto v = map.get("max_batched_tokens")) model.max_batched_tokens = v->int32_at_least(1);
  const auto chunk = map.get("prefill_chunk_tokens");
  if (chunk) model.prefill_chunk_tokens = chunk->int32_at_least(1);
  if (model.prefill_chunk_tokens % node.kv_block_tokens != 0) {
    throw InputError::at(item.document().file(), chunk ? chunk->line() : item.line(),
                         item.path() + ".prefill_chunk_tokens",
                         "expected a multiple of node.kv_block_tokens (" +
                             std::to_string(node.kv_block_tokens) + "), got " +
                             std::to_string(model.prefill_chunk_tokens) +
                             (chunk ? "" : " (the default)"));
  }
}

ModelSpec read_model(const YamlValue& item, const NodeSpec& node, size_t index) {
  const YamlMap map =
      item.map({"name", "tier", "shape", "gpus", "tensor_parallel", "max_context_tokens",
                "max_num_seqs", "max_batched_tokens", "prefill_chunk_tokens", "cost"});
  const std::string name = map.required("name").text();
  const YamlValue tier = map.required("tier");
  ModelSpec model = default_model_for_tier(
      tier.choice({"small", "large"}) == "large" ? ModelTier::kLarge : ModelTier::kSmall,
      node.hardware);
  model.id = ModelId(static_cast<uint16_t>(index));
  model.name = name;

  if (const auto shape = map.get("shape")) {
    model.shape = read_model_shape(*shape, model.name);
  } else if (std::optional<ModelShape> preset = find_shape_preset(model.name)) {
    model.shape = *preset;
  } else {
    throw InputError::at(item.document().file(), item.line(), item.path() + ".shape",
                         "expected a shape: the model's name is not a shape preset (" +
                             join_names(shape_preset_names()) +
                             "); give shape: PRESET or a mapping of dimensions");
  }

  read_placement(map, node, model);
  check_heads_split(model, map.get("shape").value_or(item));

  read_batching_limits(map, node, model);

  if (const auto cost = map.get("cost")) model.cost = read_cost_model(*cost, model.cost);
  try {
    validate_cost_model_inputs(model, node.hardware);
  } catch (const std::invalid_argument& e) {
    item.fail(e.what());
  }
  return model;
}

// Names unique, at most one large model, at least one small one.
void check_model_set(const std::vector<YamlValue>& items, const NodeSpec& node,
                     const YamlValue& list) {
  const ModelSpec* large = nullptr;
  bool any_small = false;
  for (size_t i = 0; i < node.models.size(); ++i) {
    const ModelSpec& model = node.models[i];
    for (size_t j = 0; j < i; ++j) {
      if (node.models[j].name == model.name) {
        throw InputError::at(
            list.document().file(), items[i].line(), items[i].path() + ".name",
            "duplicate model name " + in_quotes(model.name) + " (also " + items[j].path() + ")");
      }
    }
    if (model.is_large()) {
      if (large) {
        throw InputError::at(
            list.document().file(), items[i].line(), items[i].path() + ".tier",
            "expected at most one large model; " + in_quotes(large->name) + " is large already");
      }
      large = &model;
    } else {
      any_small = true;
    }
  }
  if (!any_small) list.fail("expected at least one small model (tier: small)");
}

}  // namespace

ModelSpec default_model_for_tier(ModelTier tier, const HardwareSpec& hardware) {
  ModelSpec model;
  model.tier = tier;
  model.cost = default_cost_model(tier, hardware.roofline_efficiencies);
  for (const ModelSpec& preset : default_node_spec().models) {
    if (preset.tier != tier) continue;
    model.max_context_tokens = preset.max_context_tokens;
    model.max_num_seqs = preset.max_num_seqs;
    model.max_batched_tokens = preset.max_batched_tokens;
    model.prefill_chunk_tokens = preset.prefill_chunk_tokens;
    break;
  }
  return model;
}

ModelShape read_model_shape(const YamlValue& value, const std::string& model_name) {
  if (value.is_scalar()) return shape_preset(value);
  const YamlMap map = value.map({"preset", "layers", "hidden", "q_heads", "kv_heads", "head_dim",
                                 "ffn", "parameters_b", "dtype_bytes", "experts",
                                 "experts_per_token", "active_parameters_b"});
  ModelShape shape;
  const auto preset = map.get("preset");
  if (preset) shape = shape_preset(*preset);
  const auto dimension = [&](const char* key, int32_t& field) {
    if (const auto v = map.get(key)) {
      field = v->int32_at_least(1);
    } else if (!preset) {
      map.required(key);  // without a preset every dimension must be given
    }
  };
  dimension("layers", shape.layers);
  dimension("hidden", shape.hidden);
  dimension("q_heads", shape.q_heads);
  dimension("kv_heads", shape.kv_heads);
  dimension("head_dim", shape.head_dim);
  dimension("ffn", shape.ffn);
  if (const auto v = map.get("parameters_b")) {
    shape.parameters = v->positive_number() * 1e9;
  } else if (!preset) {
    map.required("parameters_b");
  }
  if (const auto v = map.get("dtype_bytes")) shape.dtype_bytes = v->int32_at_least(1);
  read_experts(map, shape);
  if (shape.kv_heads > shape.q_heads || shape.q_heads % shape.kv_heads != 0) {
    const YamlValue where = map.get("kv_heads").value_or(value);
    where.fail("expected kv_heads to divide q_heads (grouped-query attention), got kv_heads " +
               std::to_string(shape.kv_heads) + " and q_heads " + std::to_string(shape.q_heads));
  }
  const bool modified = map.entries().size() > (preset ? 1u : 0u);
  if (!preset) {
    shape.name = model_name;
  } else if (modified) {
    shape.name += "-custom";
  }
  return shape;
}

void read_models(const YamlValue& value, NodeSpec& node) {
  const std::vector<YamlValue> items = value.list();
  if (items.size() > std::numeric_limits<ModelId::rep_type>::max()) {
    value.fail("expected at most " + std::to_string(std::numeric_limits<ModelId::rep_type>::max()) +
               " models");
  }
  node.models.clear();
  for (size_t i = 0; i < items.size(); ++i) node.models.push_back(read_model(items[i], node, i));
  check_model_set(items, node, value);
}

}  // namespace gangway
