// Bad scenario input of every general kind: YAML syntax, structure and unknown keys, wrong types,
// values out of range and unknown or duplicate names. Each is one InputError whose message starts
// with "FILE:LINE: KEY.PATH: " (the line of the offending key, 1-based) and says what was expected.
// The node's checks are in scenario_node_errors_test.cc, the workload's, the policy's, admission's
// and the faults' in scenario_workload_errors_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/scenario_errors_testing.h"

namespace gangway {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---- syntax, structure, unknown keys -----------------------------------------------------------

TEST(ScenarioErrorsTest, YamlSyntaxErrorHasFileAndLine) {
  const std::string message = bad_scenario_error(kSmallModelYaml + "workload: [unclosed\n");
  EXPECT_THAT(message, StartsWith("bad.yaml:"));
  EXPECT_THAT(message, HasSubstr("YAML syntax error"));
  expect_bad_scenario("seed: 1\n  bad indent: 2\n", "2", "YAML syntax error");
}

TEST(ScenarioErrorsTest, FileMustBeAMapping) {
  EXPECT_THAT(bad_scenario_error(""), StartsWith("bad.yaml:1: expected a scenario"));
  EXPECT_THAT(bad_scenario_error("- a\n- b\n"), StartsWith("bad.yaml:1: expected a scenario"));
}

TEST(ScenarioErrorsTest, UnknownTopLevelKeyListsTheAllowedKeys) {
  expect_bad_scenario(
      kSmallModelYaml + "modles: []\n" + kChatWorkloadYaml, "3: modles",
      "unknown key; allowed keys here: name, seed, duration_s, drain_s, warmup_s, node, "
      "scheduler, models, slo_classes, tenants, policy, workload, trace_mapping, server, "
      "admission, faults, cluster");
}

TEST(ScenarioErrorsTest, UnknownNestedKeysNameTheirPath) {
  expect_bad_scenario(R"(models:
  - name: llama-3-8b
    tier: small
    shap: llama-3-8b
)" + kChatWorkloadYaml,
                      "4: models[0].shap", "allowed keys here: name, tier, shape, gpus");
  expect_bad_scenario(kSmallModelYaml + R"(workload:
  streams:
    - name: chat
      model: llama-3-8b
      arrival: {rate_per_sec: 10}
)",
                      "7: workload.streams[0].arrival.rate_per_sec", "allowed keys here: process");
  expect_bad_scenario("node: {gpus: 8, hbm_gb: 80}\n" + kSmallModelYaml + kChatWorkloadYaml,
                      "1: node.hbm_gb", "unknown key");
}

TEST(ScenarioErrorsTest, KeysOfAnotherVariantAreNotIgnored) {
  expect_bad_scenario(kSmallModelYaml + R"(workload:
  streams:
    - name: chat
      model: llama-3-8b
      arrival:
        process: poisson
        rate_per_s: 10
        cv: 2
)",
                      "10: workload.streams[0].arrival.cv", "not used by process: poisson");
  expect_bad_scenario(R"(models:
  - name: llama-3-8b
    tier: small
    cost:
      model: constant
      compute_efficiency: 0.5
)" + kChatWorkloadYaml,
                      "6: models[0].cost.compute_efficiency", "not used by cost model: constant");
  expect_bad_scenario(kSmallModelYaml + R"(workload:
  streams:
    - name: chat
      model: llama-3-8b
      arrival: {rate_per_s: 10}
      prompt_tokens: {dist: geometric, value: 10}
)",
                      "8: workload.streams[0].prompt_tokens.value", "not used by dist: geometric");
}

TEST(ScenarioErrorsTest, DuplicateKeyIsAnError) {
  expect_bad_scenario("seed: 1\n" + kSmallModelYaml + "seed: 2\n" + kChatWorkloadYaml, "4: seed",
                      "duplicate key (first written on line 1)");
}

TEST(ScenarioErrorsTest, MissingRequiredKeys) {
  expect_bad_scenario(kChatWorkloadYaml, "1: models", "this key is required");
  expect_bad_scenario("models:\n  - {tier: small}\n" + kChatWorkloadYaml, "2: models[0].name",
                      "this key is required");
  expect_bad_scenario("models:\n  - {name: llama-3-8b}\n" + kChatWorkloadYaml, "2: models[0].tier",
                      "this key is required");
  expect_bad_scenario(
      kSmallModelYaml + "workload:\n  streams:\n    - {name: chat, arrival: {rate_per_s: 1}}\n",
      "5: workload.streams[0].model", "this key is required");
  expect_bad_scenario(
      kSmallModelYaml + "workload:\n  streams:\n    - {name: chat, model: llama-3-8b}\n",
      "5: workload.streams[0].arrival", "this key is required");
}

// ---- wrong types -------------------------------------------------------------------------------

TEST(ScenarioErrorsTest, WrongTypesSayWhatWasExpected) {
  expect_bad_scenario("duration_s: soon\n" + kSmallModelYaml + kChatWorkloadYaml, "1: duration_s",
                      "expected a number, got 'soon'");
  expect_bad_scenario("seed: 1.5\n" + kSmallModelYaml + kChatWorkloadYaml, "1: seed",
                      "expected a whole number");
  expect_bad_scenario("models: {name: llama-3-8b}\n" + kChatWorkloadYaml, "1: models",
                      "expected a list");
  expect_bad_scenario("node: 8\n" + kSmallModelYaml + kChatWorkloadYaml, "1: node",
                      "expected a mapping");
  expect_bad_scenario("duration_s: \"60\"\n" + kSmallModelYaml + kChatWorkloadYaml, "1: duration_s",
                      "got the quoted text '60'");
  expect_bad_scenario(R"(models:
  - {name: llama-3-8b, tier: small, max_num_seqs: many}
)" + kChatWorkloadYaml,
                      "2: models[0].max_num_seqs", "expected a whole number, got 'many'");
  expect_bad_scenario(R"(slo_classes:
  - {name: gold, sheddable: perhaps}
)" + kSmallModelYaml + kChatWorkloadYaml,
                      "2: slo_classes[0].sheddable", "expected true or false");
}

// ---- ranges ------------------------------------------------------------------------------------

TEST(ScenarioErrorsTest, NegativeOrZeroRates) {
  expect_bad_scenario(
      kSmallModelYaml +
          "workload:\n  streams:\n    - {name: c, model: llama-3-8b, arrival: {rate_per_s: -5}}\n",
      "5: workload.streams[0].arrival.rate_per_s", "expected a number > 0, got -5");
  expect_bad_scenario(
      kSmallModelYaml +
          "workload:\n  streams:\n    - {name: c, model: llama-3-8b, arrival: {rate_per_s: 0}}\n",
      "5: workload.streams[0].arrival.rate_per_s", "expected a number > 0, got 0");
  expect_bad_scenario(kSmallModelYaml + R"(workload:
  streams:
    - name: c
      model: llama-3-8b
      arrival: {process: ramp, start_rate_per_s: 0, end_rate_per_s: 0, ramp_s: 10}
)",
                      "7: workload.streams[0].arrival.end_rate_per_s", "no request would arrive");
  expect_bad_scenario(kSmallModelYaml + R"(workload:
  trace:
    path: )" + std::string(GANGWAY_SOURCE_DIR) +
                          R"(/data/traces/AzureLLMInferenceTrace_conv.csv
    rate_scale: 0
)",
                      "6: workload.trace.rate_scale", "expected a number > 0");
}

TEST(ScenarioErrorsTest, DurationsMustBePositive) {
  expect_bad_scenario("duration_s: 0\n" + kSmallModelYaml + kChatWorkloadYaml, "1: duration_s",
                      "expected a number > 0");
  expect_bad_scenario("duration_s: -3\n" + kSmallModelYaml + kChatWorkloadYaml, "1: duration_s",
                      "expected a number > 0");
  expect_bad_scenario("drain_s: -1\n" + kSmallModelYaml + kChatWorkloadYaml, "1: drain_s",
                      "expected a number >= 0");
  expect_bad_scenario(kSmallModelYaml + R"(workload:
  streams:
    - name: c
      model: llama-3-8b
      arrival: {process: on_off, on_rate_per_s: 5, on_s: 0, off_s: 1}
)",
                      "7: workload.streams[0].arrival.on_s", "expected a number > 0");
  expect_bad_scenario(R"(policy:
  name: time-slice
  slice_period_ms: 0
)" + kSmallModelYaml + kChatWorkloadYaml,
                      "3: policy.slice_period_ms", "expected a number > 0");
}

TEST(ScenarioErrorsTest, FractionsOutsideTheirRange) {
  expect_bad_scenario(
      "scheduler:\n  large_kv_fraction: 1.5\n" + kSmallModelYaml + kChatWorkloadYaml,
      "2: scheduler.large_kv_fraction", "expected a number in (0, 1), got 1.5");
  expect_bad_scenario(
      "scheduler:\n  kv_admission_watermark: 1\n" + kSmallModelYaml + kChatWorkloadYaml,
      "2: scheduler.kv_admission_watermark", "expected a number in [0, 1), got 1");
  expect_bad_scenario(
      "policy: {name: time-slice, slice_large_share: 1}\n" + kSmallModelYaml + kChatWorkloadYaml,
      "1: policy.slice_large_share", "expected a number in (0, 1)");
  expect_bad_scenario(kSmallModelYaml + R"(workload:
  streams:
    - name: c
      model: llama-3-8b
      arrival: {rate_per_s: 1}
      sessions: {new_session_probability: 0}
)",
                      "8: workload.streams[0].sessions.new_session_probability",
                      "expected a number in (0, 1]");
  expect_bad_scenario(R"(models:
  - name: llama-3-8b
    tier: small
    cost: {compute_efficiency: 1.2}
)" + kChatWorkloadYaml,
                      "4: models[0].cost.compute_efficiency", "expected a number in (0, 1]");
  expect_bad_scenario(
      kSmallModelYaml + "trace_mapping:\n  - {model: llama-3-8b, share: 0}\n" + kChatWorkloadYaml,
      "4: trace_mapping[0].share", "expected a number in (0, 1]");
}

TEST(ScenarioErrorsTest, CrossFieldChecksOfTheWorkloadLayerPointAtTheKey) {
  // validate(LengthSpec) finds this one; the error still has the key's own line.
  expect_bad_scenario(kSmallModelYaml + R"(workload:
  streams:
    - name: c
      model: llama-3-8b
      arrival: {rate_per_s: 1}
      prompt_tokens:
        dist: lognormal
        mean: 500
        p99: 400
)",
                      "11: workload.streams[0].prompt_tokens.p99", "p99 > mean");
  expect_bad_scenario(kSmallModelYaml + R"(workload:
  streams:
    - name: c
      model: llama-3-8b
      arrival: {rate_per_s: 1}
      output_tokens: {value: 5, min: 10, max: 3}
)",
                      "8: workload.streams[0].output_tokens.max", "expected a whole number >= 10");
}

// ---- names -------------------------------------------------------------------------------------

TEST(ScenarioErrorsTest, DuplicateNames) {
  expect_bad_scenario(R"(models:
  - {name: llama-3-8b, tier: small}
  - {name: llama-3-8b, tier: small, shape: llama-3-8b}
)" + kChatWorkloadYaml,
                      "3: models[1].name", "duplicate model name 'llama-3-8b'");
  expect_bad_scenario(kSmallModelYaml + R"(workload:
  streams:
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 1}}
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 2}}
)",
                      "6: workload.streams[1].name", "duplicate stream name 'chat'");
  expect_bad_scenario("slo_classes: [{name: a}, {name: a}]\n" + kSmallModelYaml + kChatWorkloadYaml,
                      "1: slo_classes[1].name", "duplicate SLO class name 'a'");
  expect_bad_scenario("tenants: [x, y, x]\n" + kSmallModelYaml + kChatWorkloadYaml, "1: tenants[2]",
                      "duplicate tenant name 'x'");
}

TEST(ScenarioErrorsTest, UnknownNamesListTheKnownOnes) {
  expect_bad_scenario(
      kSmallModelYaml +
          "workload:\n  streams:\n    - {name: c, model: big, arrival: {rate_per_s: 1}}\n",
      "5: workload.streams[0].model", "unknown model 'big'; known models: llama-3-8b");
  expect_bad_scenario(kSmallModelYaml + R"(workload:
  streams:
    - {name: c, model: llama-3-8b, class: gold, arrival: {rate_per_s: 1}}
)",
                      "5: workload.streams[0].class",
                      "unknown SLO class 'gold'; known classes: interactive, standard, batch");
  expect_bad_scenario("tenants: [default, team-a]\n" + kSmallModelYaml + R"(workload:
  streams:
    - {name: c, model: llama-3-8b, tenant: team-b, arrival: {rate_per_s: 1}}
)",
                      "6: workload.streams[0].tenant",
                      "unknown tenant 'team-b'; known tenants: default, team-a");
  expect_bad_scenario(
      "slo_classes: [{name: a, downgrade_to: z}]\n" + kSmallModelYaml + kChatWorkloadYaml,
      "1: slo_classes[0].downgrade_to", "unknown SLO class 'z'; known classes: a");
  expect_bad_scenario("slo_classes: [{name: a}, {name: b, downgrade_to: a}]\n" + kSmallModelYaml +
                          kChatWorkloadYaml,
                      "1: slo_classes[1].downgrade_to", "expected a class of higher rank");
  expect_bad_scenario(kSmallModelYaml + "trace_mapping: [{model: nope}]\n" + kChatWorkloadYaml,
                      "3: trace_mapping[0].model", "unknown model 'nope'");
  expect_bad_scenario("policy: first-come\n" + kSmallModelYaml + kChatWorkloadYaml, "1: policy",
                      "unknown policy 'first-come'; expected one of: fcfs, ");
  expect_bad_scenario(
      "node: {hardware: a100}\n" + kSmallModelYaml + kChatWorkloadYaml, "1: node.hardware",
      "unknown hardware preset 'a100'; expected one of: a100-sxm-80gb, h100-sxm-80gb, "
      "h200-sxm-141gb, b200-sxm-180gb, mi300x-192gb");
  expect_bad_scenario(
      "models:\n  - {name: llama-3-8b, tier: small, shape: llama-9}\n" + kChatWorkloadYaml,
      "2: models[0].shape", "unknown model shape preset 'llama-9'");
  expect_bad_scenario("models:\n  - {name: custom, tier: small}\n" + kChatWorkloadYaml,
                      "2: models[0].shape", "the model's name is not a shape preset");
  expect_bad_scenario("models:\n  - {name: llama-3-8b, tier: medium}\n" + kChatWorkloadYaml,
                      "2: models[0].tier", "expected one of small, large, got 'medium'");
}

}  // namespace
}  // namespace gangway
