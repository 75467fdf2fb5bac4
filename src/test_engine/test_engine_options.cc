#include "test_engine/test_engine_options.h"

#include <fmt/format.h>

#include <algorithm>

#include "config/hardware_presets.h"
#include "config/model_presets.h"
#include "config/scenario.h"
#include "core/input_error.h"

namespace gangway {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

InputError flag_error(const std::string& flag, const std::string& message) {
  return InputError::at("", std::nullopt, flag, message);
}

}  // namespace

std::string cost_settings_text(const CostModelSpec& cost) {
  switch (cost.kind) {
    case CostModelKind::kRoofline:
      return fmt::format(
          "roofline cost: compute_efficiency {:g}, bandwidth_efficiency {:g}, "
          "launch_overhead_ms {:g}",
          cost.compute_efficiency, cost.bandwidth_efficiency, cost.launch_overhead_s * 1e3);
    case CostModelKind::kLinear:
      return fmt::format(
          "linear cost: base_ms {:g}, per_prefill_token_us {:g}, per_decode_seq_us {:g}, "
          "per_kv_token_ns {:g}",
          cost.linear_base_s * 1e3, cost.linear_per_prefill_token_s * 1e6,
          cost.linear_per_decode_seq_s * 1e6, cost.linear_per_kv_token_s * 1e9);
    case CostModelKind::kConstant:
      return fmt::format("constant cost: iteration_ms {:g}", cost.constant_iteration_s * 1e3);
  }
  return to_string(cost.kind);
}

TestEngineSetup resolve_test_engine_setup(const TestEngineOptions& options) {
  TestEngineSetup setup;
  int64_t activation_reserve_bytes = NodeSpec{}.activation_reserve_bytes;
  if (options.model.empty()) throw flag_error("--model", "a model name is required");
  if (!options.scenario.empty()) {
    const Scenario scenario = load_scenario(options.scenario);
    const auto id = scenario.node.find_model(options.model);
    if (!id) {
      throw flag_error("--model", "'" + options.model + "' is not a model of " + options.scenario +
                                      " (it has: " + joined(scenario.node.model_names()) + ")");
    }
    setup.model = scenario.node.model(*id);
    setup.hardware = scenario.node.hardware;
    activation_reserve_bytes = scenario.node.activation_reserve_bytes;
  } else {
    const auto shape = find_shape_preset(options.model);
    if (!shape) {
      throw flag_error("--model", "unknown model '" + options.model + "'; expected a preset (" +
                                      joined(shape_preset_names()) +
                                      ") or --scenario FILE with one of its models");
    }
    setup.model.name = options.model;
    setup.model.shape = *shape;
  }
  if (options.scenario.empty() || options.hardware_given) {
    const auto hardware = find_hardware_preset(options.hardware);
    if (!hardware) {
      throw flag_error("--hardware", "unknown GPU '" + options.hardware + "'; expected one of " +
                                         joined(hardware_preset_names()));
    }
    setup.hardware = *hardware;
  }
  // Without a scenario the model's cost settings are the ones the GPU's preset gives; a
  // scenario's model keeps the cost settings the scenario resolved for its own hardware.
  if (options.scenario.empty()) {
    setup.model.cost = default_cost_model(setup.model.tier, setup.hardware.roofline_efficiencies);
  }
  if (options.tensor_parallel_size) {
    if (*options.tensor_parallel_size < 1 || *options.tensor_parallel_size > 64) {
      throw flag_error("--tensor-parallel-size",
                       "expected 1 to 64, got " + std::to_string(*options.tensor_parallel_size));
    }
    setup.model.tensor_parallel = *options.tensor_parallel_size;
  }
  if (options.port < 0 || options.port > 65535) {
    throw flag_error("--port", "expected 0 to 65535, got " + std::to_string(options.port));
  }
  if (options.max_num_seqs < 1) {
    throw flag_error("--max-num-seqs",
                     "expected at least 1, got " + std::to_string(options.max_num_seqs));
  }
  if (options.max_num_batched_tokens < 1) {
    throw flag_error("--max-num-batched-tokens",
                     "expected at least 1, got " + std::to_string(options.max_num_batched_tokens));
  }
  if (options.block_size < 1 || options.block_size > 1024) {
    throw flag_error("--block-size",
                     "expected 1 to 1024, got " + std::to_string(options.block_size));
  }
  if (options.max_model_len && *options.max_model_len < 2) {
    throw flag_error("--max-model-len",
                     "expected at least 2, got " + std::to_string(*options.max_model_len));
  }
  setup.model.max_num_seqs = options.max_num_seqs;
  setup.model.max_batched_tokens = options.max_num_batched_tokens;
  try {
    validate_cost_model_inputs(setup.model, setup.hardware);
  } catch (const std::invalid_argument& error) {
    throw flag_error("--model", setup.model.name + ": " + error.what());
  }
  setup.limits.block_tokens = options.block_size;
  setup.limits.kv_blocks =
      kv_blocks_for_memory_share(setup.model, setup.hardware, options.gpu_memory_utilization,
                                 activation_reserve_bytes, options.block_size);
  setup.limits.max_num_seqs = options.max_num_seqs;
  setup.limits.max_num_batched_tokens = options.max_num_batched_tokens;
  const int64_t kv_tokens = setup.limits.kv_blocks * options.block_size;
  const int64_t wanted = options.max_model_len.value_or(setup.model.max_context_tokens);
  if (options.max_model_len && wanted > kv_tokens) {
    throw flag_error("--max-model-len", std::to_string(wanted) +
                                            " tokens do not fit the KV cache, which holds " +
                                            std::to_string(kv_tokens) + " tokens");
  }
  setup.limits.max_model_len = static_cast<int32_t>(std::min(wanted, kv_tokens));
  return setup;
}

}  // namespace gangway
