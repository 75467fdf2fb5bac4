// engine_launch_specs: which engines gangway serve launches, in what order, with what command.
#include "server/engine_launch.h"

#include <gtest/gtest.h>

#include "config/scenario.h"

namespace gangway {
namespace {

Scenario launch_scenario(const std::string& small_launch) {
  return parse_scenario(R"(models:
  - {name: small, tier: small, shape: llama-3-8b, gpus: [0, 1]}
  - {name: large, tier: large, shape: llama-3-70b, gpus: all, tensor_parallel: 8}
workload:
  streams:
    - {name: s, model: small, arrival: {rate_per_s: 1}}
server:
  engines:
    small:
      kind: vllm
      urls: [http://127.0.0.1:8100, http://127.0.0.1:8101])" +
                            small_launch +
                            R"(
    large: {kind: openai, urls: [http://127.0.0.1:8200], launch: "serve-large --port {port}"}
)",
                        "launch.yaml");
}

TEST(EngineLaunchTest, LargeEngineFirstThenReplicasWithTheirCommandsAndHealth) {
  const Scenario scenario = launch_scenario(R"(
      launch: "serve-small --gpu {gpu} --share {memory_share}"
      environment: [VLLM_SERVER_DEV_MODE=1, A=b=c])");
  const std::vector<EngineLaunchSpec> specs =
      engine_launch_specs(scenario.server.engines, scenario.node, "/logs");
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].command,
            (std::vector<std::string>{"/bin/sh", "-c", "exec serve-large --port 8200"}));
  EXPECT_EQ(specs[0].health_url, "http://127.0.0.1:8200/v1/models");
  EXPECT_EQ(specs[0].log_path, "/logs/gangway-engine-8200.log");
  EXPECT_EQ(specs[2].command[2].rfind("exec serve-small --gpu 1 --share 0.", 0), 0u);
  EXPECT_EQ(specs[2].health_url, "http://127.0.0.1:8101/health");
  EXPECT_EQ(specs[2].environment.at("VLLM_SERVER_DEV_MODE"), "1");
  EXPECT_EQ(specs[2].environment.at("A"), "b=c");
}

TEST(EngineLaunchTest, EnginesWithoutATemplateAreAttachedNotLaunched) {
  const Scenario scenario = launch_scenario("");
  const std::vector<EngineLaunchSpec> specs =
      engine_launch_specs(scenario.server.engines, scenario.node, "/logs");
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].health_url, "http://127.0.0.1:8200/v1/models");
}

}  // namespace
}  // namespace gangway
