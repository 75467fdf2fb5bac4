// `gangway engine`'s settings, named after vLLM's engine arguments (vllm serve --help), and what
// they resolve to: the model's shape and cost, the GPU, and the batching limits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "batching/engine_limits.h"
#include "core/hardware_spec.h"
#include "core/model_spec.h"

namespace gangway {

struct TestEngineOptions {
  // A model preset (config/model_presets.h), or with `scenario` the name of one of its models.
  std::string model;
  std::string scenario;  // empty: none
  std::string hardware = "h100-sxm-80gb";
  bool hardware_given = false;  // --hardware on the command line (overrides the scenario's)
  std::string host = "127.0.0.1";
  int32_t port = 8000;
  double gpu_memory_utilization = 0.9;
  std::optional<int32_t> tensor_parallel_size;  // default: 1, or the scenario's
  int32_t max_num_seqs = 256;
  int32_t max_num_batched_tokens = 2048;
  std::optional<int32_t> max_model_len;  // default: the model's context, capped by the KV cache
  int32_t block_size = 16;
  uint64_t seed = 0;
};

struct TestEngineSetup {
  ModelSpec model;
  HardwareSpec hardware;
  EngineLimits limits;
};

// Resolves the options; InputError naming the flag (or the scenario's file and key) when one is
// wrong.
TestEngineSetup resolve_test_engine_setup(const TestEngineOptions& options);

// The cost model's settings as the startup line prints them, with the scenario's key names
// ("roofline cost: compute_efficiency 0.5, bandwidth_efficiency 0.57, launch_overhead_ms 1.1").
std::string cost_settings_text(const CostModelSpec& cost);

}  // namespace gangway
