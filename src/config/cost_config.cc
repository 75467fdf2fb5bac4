#include "config/cost_config.h"

#include <string>
#include <vector>

namespace gangway {
namespace {

const std::vector<std::string> kRooflineKeys = {"model", "compute_efficiency",
                                                "bandwidth_efficiency", "launch_overhead_ms"};
const std::vector<std::string> kLinearKeys = {"model", "base_ms", "per_prefill_token_us",
                                              "per_decode_seq_us", "per_kv_token_ns"};
const std::vector<std::string> kConstantKeys = {"model", "iteration_ms"};

void read_roofline(const YamlMap& map, CostModelSpec& cost) {
  map.restrict_to(kRooflineKeys, "cost model: roofline");
  if (const auto value = map.get("compute_efficiency")) {
    cost.compute_efficiency = value->number_in(0.0, 1.0, true, false);
  }
  if (const auto value = map.get("bandwidth_efficiency")) {
    cost.bandwidth_efficiency = value->number_in(0.0, 1.0, true, false);
  }
  if (const auto value = map.get("launch_overhead_ms")) {
    cost.launch_overhead_s = value->non_negative_number() * 1e-3;
  }
}

void read_linear(const YamlMap& map, CostModelSpec& cost) {
  map.restrict_to(kLinearKeys, "cost model: linear");
  const auto coefficient = [&](const char* key, double unit_s, double& field) {
    if (const auto value = map.get(key)) field = value->non_negative_number() * unit_s;
  };
  coefficient("base_ms", 1e-3, cost.linear_base_s);
  coefficient("per_prefill_token_us", 1e-6, cost.linear_per_prefill_token_s);
  coefficient("per_decode_seq_us", 1e-6, cost.linear_per_decode_seq_s);
  coefficient("per_kv_token_ns", 1e-9, cost.linear_per_kv_token_s);
  const double sum = cost.linear_base_s + cost.linear_per_prefill_token_s +
                     cost.linear_per_decode_seq_s + cost.linear_per_kv_token_s;
  if (!(sum > 0.0)) {
    map.self().fail(
        "expected at least one of base_ms, per_prefill_token_us, per_decode_seq_us, "
        "per_kv_token_ns > 0 for the linear cost model (an iteration cannot take no time)");
  }
}

void read_constant(const YamlMap& map, CostModelSpec& cost) {
  map.restrict_to(kConstantKeys, "cost model: constant");
  if (const auto value = map.get("iteration_ms")) {
    cost.constant_iteration_s = value->positive_number() * 1e-3;
  }
}

}  // namespace

CostModelSpec read_cost_model(const YamlValue& value, const CostModelSpec& defaults) {
  std::vector<std::string> all_keys = kRooflineKeys;
  all_keys.insert(all_keys.end(), kLinearKeys.begin() + 1, kLinearKeys.end());
  all_keys.insert(all_keys.end(), kConstantKeys.begin() + 1, kConstantKeys.end());
  const YamlMap map = value.map(all_keys);
  CostModelSpec cost = defaults;
  const std::string kind = map.has("model")
                               ? map.required("model").choice({"roofline", "linear", "constant"})
                               : "roofline";
  if (kind == "roofline") {
    cost.kind = CostModelKind::kRoofline;
    read_roofline(map, cost);
  } else if (kind == "linear") {
    cost.kind = CostModelKind::kLinear;
    read_linear(map, cost);
  } else {
    cost.kind = CostModelKind::kConstant;
    read_constant(map, cost);
  }
  return cost;
}

}  // namespace gangway
