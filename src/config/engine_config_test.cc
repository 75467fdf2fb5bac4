// The `server.engines:` section: engines per model, memory shares from the KV layout, the tier
// mode, and located errors for every malformed entry.
#include "config/engine_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/scenario.h"
#include "config/scenario_errors_testing.h"

namespace gangway {
namespace {

// The default node's two models on 2 GPUs (lines 1-3).
const std::string kModels = R"(node: {gpus: 2}
models:
  - {name: small, tier: small, shape: llama-3-8b, gpus: all}
  - {name: large, tier: large, shape: llama-3-8b, gpus: all, tensor_parallel: 2}
workload:
  streams:
    - {name: s, model: small, arrival: {rate_per_s: 1}, prompt_tokens: 8, output_tokens: 4}
)";

Scenario with_engines(const std::string& engines, const std::string& policy = "") {
  return parse_scenario(kModels + policy + "server:\n  engines:\n" + engines, "engines.yaml");
}

void expect_engines_error(const std::string& engines, const std::string& where,
                          const std::string& what) {
  expect_scenario_error(kModels + "server:\n  engines:\n" + engines, "engines.yaml", where, what);
}

const std::string kVllm =
    R"(    small: {kind: vllm, urls: [http://127.0.0.1:8101, http://127.0.0.1:8102]}
    large: {kind: vllm, urls: [http://127.0.0.1:8200]}
)";

TEST(EngineConfigTest, NoSectionMeansTheEmulatedGpus) {
  const Scenario scenario = parse_scenario(kModels, "engines.yaml");
  EXPECT_FALSE(scenario.server.engines.real());
  const Scenario emulated = with_engines("    small: {kind: emulated}\n");
  EXPECT_FALSE(emulated.server.engines.real());
}

TEST(EngineConfigTest, ReadsOneEnginePerReplicaAndOneForTheLargeModel) {
  const EnginesConfig config = with_engines(kVllm).server.engines;
  ASSERT_TRUE(config.real());
  ASSERT_EQ(config.models.size(), 2u);
  const ModelEngines& small = config.models[0];
  EXPECT_EQ(small.kind, EngineKind::kVllm);
  EXPECT_EQ(small.served_model_name, "small");
  ASSERT_EQ(small.endpoints.size(), 2u);
  EXPECT_EQ(small.endpoints[1].host, "127.0.0.1");
  EXPECT_EQ(small.endpoints[1].port, 8102);
  EXPECT_EQ(small.endpoints[1].gpus, std::vector<GpuId>{GpuId(1)});
  const ModelEngines& large = config.models[1];
  ASSERT_EQ(large.endpoints.size(), 1u);
  EXPECT_EQ(large.endpoints[0].gpus.size(), 2u);
  EXPECT_GT(small.endpoints[0].kv_capacity_tokens, 0);
  EXPECT_GT(large.endpoints[0].kv_capacity_tokens, 0);
  EXPECT_EQ(config.mode, EngineTierMode::kLease);
}

TEST(EngineConfigTest, MemorySharesOfOneGpuAddUpToAtMostAllOfIt) {
  const EnginesConfig config = with_engines(kVllm).server.engines;
  const double small = config.models[0].endpoints[0].memory_share;
  const double large = config.models[1].endpoints[0].memory_share;
  EXPECT_GT(small, 0.2);
  EXPECT_GT(large, 0.2);
  EXPECT_LE(small + large, 1.0);
  // Everything but the rounding: weights, KV split and the activation reserve are all handed out.
  EXPECT_GT(small + large, 0.99);
}

TEST(EngineConfigTest, SglangSharesLeaveTheActivationsOut) {
  const EnginesConfig vllm = with_engines(kVllm).server.engines;
  const EnginesConfig sglang =
      with_engines(
          R"(    small: {kind: sglang, urls: [http://127.0.0.1:8101, http://127.0.0.1:8102]}
    large: {kind: sglang, urls: [http://127.0.0.1:8200]}
)")
          .server.engines;
  EXPECT_LT(sglang.models[0].endpoints[0].memory_share, vllm.models[0].endpoints[0].memory_share);
  EXPECT_EQ(sglang.mode, EngineTierMode::kLease);
}

TEST(EngineConfigTest, EnginesWithoutPauseOrAnExclusivePolicyGiveExclusiveMode) {
  const EnginesConfig openai =
      with_engines(
          R"(    small: {kind: openai, urls: [http://127.0.0.1:8101, http://127.0.0.1:8102]}
    large: {kind: vllm, urls: [http://127.0.0.1:8200]}
)")
          .server.engines;
  EXPECT_EQ(openai.mode, EngineTierMode::kExclusive);
  const EnginesConfig exclusive =
      with_engines(kVllm, "policy: {name: gangway, mode: exclusive}\n").server.engines;
  EXPECT_EQ(exclusive.mode, EngineTierMode::kExclusive);
}

TEST(EngineConfigTest, LaunchTemplateIsFilledPerEngine) {
  const EnginesConfig config = with_engines(R"(    small:
      kind: vllm
      urls: [http://127.0.0.1:8101, http://127.0.0.1:8102]
      launch: "vllm serve m --port {port} --gpu-memory-utilization {memory_share} --served-model-name {model} # gpu {gpu}"
      environment: [VLLM_SERVER_DEV_MODE=1]
    large: {kind: vllm, urls: [http://127.0.0.1:8200], launch: "x {gpu}"}
)")
                                   .server.engines;
  const EngineEndpoint& second = config.models[0].endpoints[1];
  char share[16];
  std::snprintf(share, sizeof share, "%.3f", second.memory_share);
  EXPECT_EQ(second.launch_command,
            std::string("vllm serve m --port 8102 --gpu-memory-utilization ") + share +
                " --served-model-name small # gpu 1");
  EXPECT_EQ(config.models[0].environment, std::vector<std::string>{"VLLM_SERVER_DEV_MODE=1"});
  EXPECT_EQ(config.models[1].endpoints[0].launch_command, "x 0,1");
}

TEST(EngineConfigTest, ReadsTheEngineTimeouts) {
  const ServerConfig config =
      parse_scenario(kModels +
                         "server:\n  engine_idle_timeout_s: 2\n  engine_control_timeout_s: "
                         "0.5\n  engine_health_interval_s: 0.25\n",
                     "engines.yaml")
          .server;
  EXPECT_EQ(config.engines.idle_timeout, std::chrono::seconds(2));
  EXPECT_EQ(config.engines.control_timeout, std::chrono::milliseconds(500));
  EXPECT_EQ(config.engines.health_interval, std::chrono::milliseconds(250));
}

// ---- errors: "engines.yaml:LINE: server.engines.KEY: ..." ---------------------------------------

TEST(EngineConfigTest, UnknownModelListsTheModels) {
  expect_engines_error("    tiny: {kind: vllm, urls: [http://127.0.0.1:1]}\n",
                       "10: server.engines.tiny", "unknown key; allowed keys here: small, large");
}

TEST(EngineConfigTest, UnknownKindListsTheKinds) {
  expect_engines_error("    small: {kind: tgi, urls: []}\n", "10: server.engines.small.kind",
                       "emulated, vllm, sglang, openai");
}

TEST(EngineConfigTest, WrongNumberOfUrlsSaysHowMany) {
  expect_engines_error(R"(    small: {kind: vllm, urls: [http://127.0.0.1:8101]}
    large: {kind: vllm, urls: [http://127.0.0.1:8200]}
)",
                       "10: server.engines.small.urls", "expected 2 URLs (one per replica");
  expect_engines_error(
      R"(    small: {kind: vllm, urls: [http://127.0.0.1:8101, http://127.0.0.1:8102]}
    large: {kind: vllm, urls: [http://127.0.0.1:8200, http://127.0.0.1:8201]}
)",
      "11: server.engines.large.urls", "expected 1 URL (one engine for the large");
}

TEST(EngineConfigTest, BadUrlIsNamed) {
  expect_engines_error(
      R"(    small: {kind: vllm, urls: [https://127.0.0.1:8101, http://127.0.0.1:8102]}
    large: {kind: vllm, urls: [http://127.0.0.1:8200]}
)",
      "10: server.engines.small.urls[0]", "expected http://HOST:PORT");
  expect_engines_error(
      R"(    small: {kind: vllm, urls: [http://127.0.0.1:99999, http://127.0.0.1:8102]}
    large: {kind: vllm, urls: [http://127.0.0.1:8200]}
)",
      "10: server.engines.small.urls[0]", "expected http://HOST:PORT");
}

TEST(EngineConfigTest, AddressGivenTwiceIsAnError) {
  expect_engines_error(
      R"(    small: {kind: vllm, urls: [http://127.0.0.1:8101, http://127.0.0.1:8102]}
    large: {kind: vllm, urls: [http://127.0.0.1:8101]}
)",
      "11: server.engines.large.urls[0]", "is given twice");
}

TEST(EngineConfigTest, EveryModelNeedsAnEngine) {
  expect_engines_error("    small: {kind: vllm, urls: [http://127.0.0.1:1, http://127.0.0.1:2]}\n",
                       "9: server.engines", "no engine for model 'large'");
}

TEST(EngineConfigTest, EmulatedCannotBeMixedWithEngines) {
  expect_engines_error(
      R"(    small: {kind: vllm, urls: [http://127.0.0.1:8101, http://127.0.0.1:8102]}
    large: {kind: emulated}
)",
      "11: server.engines.large", "cannot be mixed");
}

TEST(EngineConfigTest, UnknownLaunchPlaceholderIsNamed) {
  expect_engines_error(
      R"(    small: {kind: vllm, urls: [http://127.0.0.1:8101, http://127.0.0.1:8102], launch: "x {gpus}"}
    large: {kind: vllm, urls: [http://127.0.0.1:8200]}
)",
      "10: server.engines.small.launch", "unknown placeholder {gpus}");
}

}  // namespace
}  // namespace gangway
