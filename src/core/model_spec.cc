#include "core/model_spec.h"

namespace gangway {

const char* to_string(ModelTier tier) {
  switch (tier) {
    case ModelTier::kSmall:
      return "small";
    case ModelTier::kLarge:
      return "large";
  }
  return "?";
}

const char* to_string(CostModelKind kind) {
  switch (kind) {
    case CostModelKind::kRoofline:
      return "roofline";
    case CostModelKind::kLinear:
      return "linear";
    case CostModelKind::kConstant:
      return "constant";
  }
  return "?";
}

CostModelSpec default_cost_model(ModelTier tier, const RooflineEfficiencies& efficiencies) {
  CostModelSpec cost;
  cost.kind = CostModelKind::kRoofline;
  cost.compute_efficiency =
      tier == ModelTier::kLarge ? kLargeModelComputeEfficiency : efficiencies.compute_efficiency;
  cost.bandwidth_efficiency = efficiencies.bandwidth_efficiency;
  cost.launch_overhead_s = efficiencies.launch_overhead_s;
  return cost;
}

ModelShape llama3_8b_shape() {
  ModelShape shape;
  shape.name = "llama-3-8b";
  shape.layers = 32;
  shape.hidden = 4096;
  shape.q_heads = 32;
  shape.kv_heads = 8;
  shape.head_dim = 128;
  shape.ffn = 14336;
  shape.parameters = 8.03e9;
  return shape;
}

ModelShape llama3_70b_shape() {
  ModelShape shape;
  shape.name = "llama-3-70b";
  shape.layers = 80;
  shape.hidden = 8192;
  shape.q_heads = 64;
  shape.kv_heads = 8;
  shape.head_dim = 128;
  shape.ffn = 28672;
  shape.parameters = 70.55e9;
  return shape;
}

}  // namespace gangway
