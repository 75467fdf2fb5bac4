// Bad scenario input about the node: where models are placed on GPUs, tensor parallelism, block
// and chunk sizes, model shapes and cost models, and weights that do not fit in GPU memory.
// Each is one located InputError (scenario_errors_testing.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/scenario_errors_testing.h"

namespace gangway {
namespace {

// ---- placement ---------------------------------------------------------------------------------

TEST(ScenarioErrorsTest, ModelWithoutAGpu) {
  expect_bad_scenario(
      "models:\n  - {name: llama-3-8b, tier: small, gpus: []}\n" + kChatWorkloadYaml,
      "2: models[0].gpus", "expected at least one GPU");
}

TEST(ScenarioErrorsTest, GpuIndexOutOfRange) {
  expect_bad_scenario(R"(node: {gpus: 4}
models:
  - name: llama-3-8b
    tier: small
    gpus: [0, 1, 4]
)" + kChatWorkloadYaml,
                      "5: models[0].gpus[2]", "GPU index out of range: expected 0 to 3");
  expect_bad_scenario(
      "models:\n  - {name: llama-3-8b, tier: small, gpus: [1, 1]}\n" + kChatWorkloadYaml,
      "2: models[0].gpus[1]", "listed twice");
  expect_bad_scenario(
      "models:\n  - {name: llama-3-8b, tier: small, gpus: some}\n" + kChatWorkloadYaml,
      "2: models[0].gpus", "expected 'all' or a list of GPU indices");
}

TEST(ScenarioErrorsTest, AtMostOneLargeModel) {
  expect_bad_scenario(R"(models:
  - {name: llama-3-8b, tier: small}
  - {name: big1, tier: large, shape: llama-3-70b}
  - {name: big2, tier: large, shape: llama-3-70b}
)" + kChatWorkloadYaml,
                      "4: models[2].tier",
                      "expected at most one large model; 'big1' is large already");
}

TEST(ScenarioErrorsTest, LargeModelMustSpanEveryGpu) {
  expect_bad_scenario(R"(models:
  - {name: llama-3-8b, tier: small}
  - name: big
    tier: large
    shape: llama-3-70b
    gpus: [0, 1, 2, 3]
)" + kChatWorkloadYaml,
                      "6: models[1].gpus", "expected a large model to span every GPU of the node");
  expect_bad_scenario(R"(models:
  - {name: llama-3-8b, tier: small}
  - {name: big, tier: large, shape: llama-3-70b, tensor_parallel: 4}
)" + kChatWorkloadYaml,
                      "3: models[1].tensor_parallel", "to equal node.gpus (8), got 4");
}

TEST(ScenarioErrorsTest, SmallModelRunsAtTensorParallelOne) {
  expect_bad_scenario(
      "models:\n  - {name: llama-3-8b, tier: small, tensor_parallel: 2}\n" + kChatWorkloadYaml,
      "2: models[0].tensor_parallel", "expected 1 for a small model");
}

TEST(ScenarioErrorsTest, NeedsASmallModel) {
  expect_bad_scenario(
      "models:\n  - {name: big, tier: large, shape: llama-3-70b}\n" + kChatWorkloadYaml,
      "1: models", "expected at least one small model");
}

TEST(ScenarioErrorsTest, BlockSizeAndPrefillChunk) {
  expect_bad_scenario("node: {kv_block_tokens: 0}\n" + kSmallModelYaml + kChatWorkloadYaml,
                      "1: node.kv_block_tokens", "expected a whole number >= 1, got 0");
  expect_bad_scenario(R"(models:
  - name: llama-3-8b
    tier: small
    prefill_chunk_tokens: 500
)" + kChatWorkloadYaml,
                      "4: models[0].prefill_chunk_tokens",
                      "expected a multiple of node.kv_block_tokens (16), got 500");
  expect_bad_scenario("node: {kv_block_tokens: 48}\n" + kSmallModelYaml + kChatWorkloadYaml,
                      "3: models[0].prefill_chunk_tokens", "(the default)");
}

TEST(ScenarioErrorsTest, ShapeChecks) {
  expect_bad_scenario(R"(models:
  - name: llama-3-8b
    tier: small
    shape: {hidden: 4096, q_heads: 32, kv_heads: 8, head_dim: 128, ffn: 14336, parameters_b: 8}
)" + kChatWorkloadYaml,
                      "4: models[0].shape.layers", "this key is required");
  expect_bad_scenario(R"(models:
  - name: llama-3-8b
    tier: small
    shape:
      preset: llama-3-8b
      kv_heads: 12
)" + kChatWorkloadYaml,
                      "6: models[0].shape.kv_heads", "expected kv_heads to divide q_heads");
  expect_bad_scenario(R"(models:
  - {name: llama-3-8b, tier: small}
  - name: big
    tier: large
    shape: {preset: llama-3-70b, q_heads: 60, kv_heads: 6}
)" + kChatWorkloadYaml,
                      "5: models[1].shape", "to be divisible by tensor_parallel (8)");
}

TEST(ScenarioErrorsTest, CostModelChecks) {
  expect_bad_scenario(R"(models:
  - name: llama-3-8b
    tier: small
    cost: {model: linear}
)" + kChatWorkloadYaml,
                      "4: models[0].cost", "expected at least one of base_ms");
  expect_bad_scenario(
      "models:\n  - {name: llama-3-8b, tier: small, cost: {model: magic}}\n" + kChatWorkloadYaml,
      "2: models[0].cost.model", "expected one of roofline, linear, constant");
}

// ---- memory ------------------------------------------------------------------------------------

TEST(ScenarioErrorsTest, WeightsLargerThanHbm) {
  expect_bad_scenario(R"(node:
  hardware: {preset: h100-sxm-80gb, hbm_gb: 30}
models:
  - {name: llama-3-8b, tier: small}
  - {name: big, tier: large, shape: llama-3-70b}
)" + kChatWorkloadYaml,
                      "3: models", "do not fit");
  expect_bad_scenario(R"(node: {gpus: 1}
models:
  - {name: big, tier: small, shape: llama-3-70b}
workload:
  streams:
    - {name: chat, model: big, arrival: {rate_per_s: 10}}
)",
                      "2: models", "models on that GPU: big");
}

}  // namespace
}  // namespace gangway
