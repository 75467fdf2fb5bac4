#include "config/model_presets.h"

namespace gangway {
namespace {

// Dimensions as each checkpoint's config.json on Hugging Face gives them (num_hidden_layers,
// hidden_size, num_attention_heads, num_key_value_heads, head_dim = hidden / heads,
// intermediate_size) and the parameter count its model card states.
ModelShape dense(const char* name, int32_t layers, int32_t hidden, int32_t q_heads,
                 int32_t kv_heads, int32_t ffn, double parameters) {
  ModelShape shape;
  shape.name = name;
  shape.layers = layers;
  shape.hidden = hidden;
  shape.q_heads = q_heads;
  shape.kv_heads = kv_heads;
  shape.head_dim = hidden / q_heads;
  shape.ffn = ffn;
  shape.parameters = parameters;
  return shape;
}

// meta-llama/Llama-3.1-8B(-Instruct): the same dimensions as Llama 3 8B (llama3_8b_shape).
ModelShape llama31_8b() {
  ModelShape shape = llama3_8b_shape();
  shape.name = "llama-3.1-8b";
  return shape;
}

// meta-llama/Llama-3.1-70B and Llama-3.3-70B-Instruct: Llama 3 70B's dimensions.
ModelShape llama31_70b() {
  ModelShape shape = llama3_70b_shape();
  shape.name = "llama-3.1-70b";
  return shape;
}

ModelShape llama33_70b() {
  ModelShape shape = llama3_70b_shape();
  shape.name = "llama-3.3-70b";
  return shape;
}

// meta-llama/Llama-3.1-405B: 126 layers, hidden 16384, 128 heads, 8 KV heads, intermediate
// 53248; 405 B parameters (model card; 405.85 B counted from the dimensions with its 128,256
// token vocabulary). 811 GB of bf16 weights: it fits 8 x H200, B200 or MI300X, not 8 x H100 80 GB
// (dtype_bytes: 1 for FP8 halves it).
ModelShape llama31_405b() {
  return dense("llama-3.1-405b", 126, 16384, 128, 8, 53248, 405.85e9);
}

// Qwen/Qwen2.5-7B: 28 layers, hidden 3584, 28 heads, 4 KV heads, intermediate 18944; 7.61 B.
ModelShape qwen25_7b() {
  return dense("qwen2.5-7b", 28, 3584, 28, 4, 18944, 7.61e9);
}

// Qwen/Qwen2.5-72B: 80 layers, hidden 8192, 64 heads, 8 KV heads, intermediate 29568; 72.7 B.
ModelShape qwen25_72b() {
  return dense("qwen2.5-72b", 80, 8192, 64, 8, 29568, 72.7e9);
}

// mistralai/Mistral-7B-v0.3: 32 layers, hidden 4096, 32 heads, 8 KV heads, intermediate 14336;
// 7.25 B.
ModelShape mistral_7b() {
  return dense("mistral-7b", 32, 4096, 32, 8, 14336, 7.25e9);
}

// mistralai/Mixtral-8x7B-v0.1: 32 layers, hidden 4096, 32 heads, 8 KV heads, 8 experts of
// intermediate 14336 per layer, 2 per token; 46.7 B parameters, 12.9 B active per token (the
// model's announcement).
ModelShape mixtral_8x7b() {
  ModelShape shape = dense("mixtral-8x7b", 32, 4096, 32, 8, 14336, 46.7e9);
  shape.experts = 8;
  shape.experts_per_token = 2;
  shape.active_parameters = 12.9e9;
  return shape;
}

// mistralai/Mixtral-8x22B-v0.1: 56 layers, hidden 6144, 48 heads, 8 KV heads, 8 experts of
// intermediate 16384, 2 per token; 141 B parameters, 39 B active.
ModelShape mixtral_8x22b() {
  ModelShape shape = dense("mixtral-8x22b", 56, 6144, 48, 8, 16384, 141e9);
  shape.experts = 8;
  shape.experts_per_token = 2;
  shape.active_parameters = 39e9;
  return shape;
}

struct ShapePreset {
  const char* name;
  ModelShape (*make)();
};

constexpr ShapePreset kShapePresets[] = {
    {"llama-3-8b", &llama3_8b_shape},  {"llama-3-70b", &llama3_70b_shape},
    {"llama-3.1-8b", &llama31_8b},     {"llama-3.1-70b", &llama31_70b},
    {"llama-3.3-70b", &llama33_70b},   {"llama-3.1-405b", &llama31_405b},
    {"qwen2.5-7b", &qwen25_7b},        {"qwen2.5-72b", &qwen25_72b},
    {"mistral-7b", &mistral_7b},       {"mixtral-8x7b", &mixtral_8x7b},
    {"mixtral-8x22b", &mixtral_8x22b},
};

}  // namespace

std::optional<ModelShape> find_shape_preset(const std::string& name) {
  for (const ShapePreset& preset : kShapePresets) {
    if (name == preset.name) return preset.make();
  }
  return std::nullopt;
}

std::vector<std::string> shape_preset_names() {
  std::vector<std::string> names;
  for (const ShapePreset& preset : kShapePresets) names.emplace_back(preset.name);
  return names;
}

}  // namespace gangway
