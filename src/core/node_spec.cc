#include "core/node_spec.h"

namespace gangway {

std::vector<std::string> NodeSpec::model_names() const {
  std::vector<std::string> names;
  for (const ModelSpec& m : models) names.push_back(m.name);
  return names;
}

std::vector<std::string> NodeSpec::slo_class_names() const {
  std::vector<std::string> names;
  for (const SloClass& c : slo_classes) names.push_back(c.name);
  return names;
}

NodeSpec default_node_spec() {
  NodeSpec node;
  node.hardware = h100_sxm_80gb();
  node.slo_classes = default_slo_classes();

  ModelSpec small;
  small.id = ModelId(0);
  small.name = "llama-3-8b";
  small.tier = ModelTier::kSmall;
  small.shape = llama3_8b_shape();
  small.tensor_parallel = 1;
  for (int g = 0; g < node.gpu_count; ++g) small.gpus.emplace_back(g);
  small.cost = default_cost_model(ModelTier::kSmall, node.hardware.roofline_efficiencies);
  node.models.push_back(small);

  ModelSpec large;
  large.id = ModelId(1);
  large.name = "llama-3-70b";
  large.tier = ModelTier::kLarge;
  large.shape = llama3_70b_shape();
  large.tensor_parallel = node.gpu_count;
  for (int g = 0; g < node.gpu_count; ++g) large.gpus.emplace_back(g);
  large.cost = default_cost_model(ModelTier::kLarge, node.hardware.roofline_efficiencies);
  // A 512-token chunk is ~23 ms of compute plus ~12 ms of all-reduce at TP=8.
  large.max_batched_tokens = 512;
  large.prefill_chunk_tokens = 512;
  node.models.push_back(large);
  return node;
}

}  // namespace gangway
