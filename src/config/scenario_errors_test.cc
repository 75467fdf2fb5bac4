// Every kind of bad scenario input is one InputError whose message starts with
// "FILE:LINE: KEY.PATH: " (the line of the offending key, 1-based) and says what was expected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/scenario.h"
#include "config/scenario_errors_testing.h"
#include "core/input_error.h"

namespace gangway {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string error_of(const std::string& yaml) {
  return scenario_error_of(yaml, "bad.yaml");
}

void expect_error(const std::string& yaml, const std::string& where, const std::string& what) {
  expect_scenario_error(yaml, "bad.yaml", where, what);
}

// Two lines; a small model "llama-3-8b".
const std::string kModels = R"(models:
  - {name: llama-3-8b, tier: small, shape: llama-3-8b}
)";
// Three lines; one stream of "llama-3-8b".
const std::string kWorkload = R"(workload:
  streams:
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 10}}
)";

// ---- syntax, structure, unknown keys -----------------------------------------------------------

TEST(ScenarioErrorsTest, YamlSyntaxErrorHasFileAndLine) {
  const std::string message = error_of(kModels + "workload: [unclosed\n");
  EXPECT_THAT(message, StartsWith("bad.yaml:"));
  EXPECT_THAT(message, HasSubstr("YAML syntax error"));
  expect_error("seed: 1\n  bad indent: 2\n", "2", "YAML syntax error");
}

TEST(ScenarioErrorsTest, FileMustBeAMapping) {
  EXPECT_THAT(error_of(""), StartsWith("bad.yaml:1: expected a scenario"));
  EXPECT_THAT(error_of("- a\n- b\n"), StartsWith("bad.yaml:1: expected a scenario"));
}

TEST(ScenarioErrorsTest, UnknownTopLevelKeyListsTheAllowedKeys) {
  expect_error(kModels + "modles: []\n" + kWorkload, "3: modles",
               "unknown key; allowed keys here: name, seed, duration_s, drain_s, warmup_s, node, "
               "scheduler, models, slo_classes, tenants, policy, workload, trace_mapping, server, "
               "admission, faults, cluster");
}

TEST(ScenarioErrorsTest, UnknownNestedKeysNameTheirPath) {
  expect_error(R"(models:
  - name: llama-3-8b
    tier: small
    shap: llama-3-8b
)" + kWorkload,
               "4: models[0].shap", "allowed keys here: name, tier, shape, gpus");
  expect_error(kModels + R"(workload:
  streams:
    - name: chat
      model: llama-3-8b
      arrival: {rate_per_sec: 10}
)",
               "7: workload.streams[0].arrival.rate_per_sec", "allowed keys here: process");
  expect_error("node: {gpus: 8, hbm_gb: 80}\n" + kModels + kWorkload, "1: node.hbm_gb",
               "unknown key");
}

TEST(ScenarioErrorsTest, KeysOfAnotherVariantAreNotIgnored) {
  expect_error(kModels + R"(workload:
  streams:
    - name: chat
      model: llama-3-8b
      arrival:
        process: poisson
        rate_per_s: 10
        cv: 2
)",
               "10: workload.streams[0].arrival.cv", "not used by process: poisson");
  expect_error(R"(models:
  - name: llama-3-8b
    tier: small
    cost:
      model: constant
      compute_efficiency: 0.5
)" + kWorkload,
               "6: models[0].cost.compute_efficiency", "not used by cost model: constant");
  expect_error(kModels + R"(workload:
  streams:
    - name: chat
      model: llama-3-8b
      arrival: {rate_per_s: 10}
      prompt_tokens: {dist: geometric, value: 10}
)",
               "8: workload.streams[0].prompt_tokens.value", "not used by dist: geometric");
}

TEST(ScenarioErrorsTest, DuplicateKeyIsAnError) {
  expect_error("seed: 1\n" + kModels + "seed: 2\n" + kWorkload, "4: seed",
               "duplicate key (first written on line 1)");
}

TEST(ScenarioErrorsTest, MissingRequiredKeys) {
  expect_error(kWorkload, "1: models", "this key is required");
  expect_error("models:\n  - {tier: small}\n" + kWorkload, "2: models[0].name",
               "this key is required");
  expect_error("models:\n  - {name: llama-3-8b}\n" + kWorkload, "2: models[0].tier",
               "this key is required");
  expect_error(kModels + "workload:\n  streams:\n    - {name: chat, arrival: {rate_per_s: 1}}\n",
               "5: workload.streams[0].model", "this key is required");
  expect_error(kModels + "workload:\n  streams:\n    - {name: chat, model: llama-3-8b}\n",
               "5: workload.streams[0].arrival", "this key is required");
}

// ---- wrong types -------------------------------------------------------------------------------

TEST(ScenarioErrorsTest, WrongTypesSayWhatWasExpected) {
  expect_error("duration_s: soon\n" + kModels + kWorkload, "1: duration_s",
               "expected a number, got 'soon'");
  expect_error("seed: 1.5\n" + kModels + kWorkload, "1: seed", "expected a whole number");
  expect_error("models: {name: llama-3-8b}\n" + kWorkload, "1: models", "expected a list");
  expect_error("node: 8\n" + kModels + kWorkload, "1: node", "expected a mapping");
  expect_error("duration_s: \"60\"\n" + kModels + kWorkload, "1: duration_s",
               "got the quoted text '60'");
  expect_error(R"(models:
  - {name: llama-3-8b, tier: small, max_num_seqs: many}
)" + kWorkload,
               "2: models[0].max_num_seqs", "expected a whole number, got 'many'");
  expect_error(R"(slo_classes:
  - {name: gold, sheddable: perhaps}
)" + kModels + kWorkload,
               "2: slo_classes[0].sheddable", "expected true or false");
}

// ---- ranges ------------------------------------------------------------------------------------

TEST(ScenarioErrorsTest, NegativeOrZeroRates) {
  expect_error(
      kModels +
          "workload:\n  streams:\n    - {name: c, model: llama-3-8b, arrival: {rate_per_s: -5}}\n",
      "5: workload.streams[0].arrival.rate_per_s", "expected a number > 0, got -5");
  expect_error(
      kModels +
          "workload:\n  streams:\n    - {name: c, model: llama-3-8b, arrival: {rate_per_s: 0}}\n",
      "5: workload.streams[0].arrival.rate_per_s", "expected a number > 0, got 0");
  expect_error(kModels + R"(workload:
  streams:
    - name: c
      model: llama-3-8b
      arrival: {process: ramp, start_rate_per_s: 0, end_rate_per_s: 0, ramp_s: 10}
)",
               "7: workload.streams[0].arrival.end_rate_per_s", "no request would arrive");
  expect_error(kModels + R"(workload:
  trace:
    path: )" + std::string(GANGWAY_SOURCE_DIR) +
                   R"(/data/traces/AzureLLMInferenceTrace_conv.csv
    rate_scale: 0
)",
               "6: workload.trace.rate_scale", "expected a number > 0");
}

TEST(ScenarioErrorsTest, DurationsMustBePositive) {
  expect_error("duration_s: 0\n" + kModels + kWorkload, "1: duration_s", "expected a number > 0");
  expect_error("duration_s: -3\n" + kModels + kWorkload, "1: duration_s", "expected a number > 0");
  expect_error("drain_s: -1\n" + kModels + kWorkload, "1: drain_s", "expected a number >= 0");
  expect_error(kModels + R"(workload:
  streams:
    - name: c
      model: llama-3-8b
      arrival: {process: on_off, on_rate_per_s: 5, on_s: 0, off_s: 1}
)",
               "7: workload.streams[0].arrival.on_s", "expected a number > 0");
  expect_error(R"(policy:
  name: time-slice
  slice_period_ms: 0
)" + kModels + kWorkload,
               "3: policy.slice_period_ms", "expected a number > 0");
}

TEST(ScenarioErrorsTest, FractionsOutsideTheirRange) {
  expect_error("scheduler:\n  large_kv_fraction: 1.5\n" + kModels + kWorkload,
               "2: scheduler.large_kv_fraction", "expected a number in (0, 1), got 1.5");
  expect_error("scheduler:\n  kv_admission_watermark: 1\n" + kModels + kWorkload,
               "2: scheduler.kv_admission_watermark", "expected a number in [0, 1), got 1");
  expect_error("policy: {name: time-slice, slice_large_share: 1}\n" + kModels + kWorkload,
               "1: policy.slice_large_share", "expected a number in (0, 1)");
  expect_error(kModels + R"(workload:
  streams:
    - name: c
      model: llama-3-8b
      arrival: {rate_per_s: 1}
      sessions: {new_session_probability: 0}
)",
               "8: workload.streams[0].sessions.new_session_probability",
               "expected a number in (0, 1]");
  expect_error(R"(models:
  - name: llama-3-8b
    tier: small
    cost: {compute_efficiency: 1.2}
)" + kWorkload,
               "4: models[0].cost.compute_efficiency", "expected a number in (0, 1]");
  expect_error(kModels + "trace_mapping:\n  - {model: llama-3-8b, share: 0}\n" + kWorkload,
               "4: trace_mapping[0].share", "expected a number in (0, 1]");
}

TEST(ScenarioErrorsTest, CrossFieldChecksOfTheWorkloadLayerPointAtTheKey) {
  // validate(LengthSpec) finds this one; the error still has the key's own line.
  expect_error(kModels + R"(workload:
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
  expect_error(kModels + R"(workload:
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
  expect_error(R"(models:
  - {name: llama-3-8b, tier: small}
  - {name: llama-3-8b, tier: small, shape: llama-3-8b}
)" + kWorkload,
               "3: models[1].name", "duplicate model name 'llama-3-8b'");
  expect_error(kModels + R"(workload:
  streams:
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 1}}
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 2}}
)",
               "6: workload.streams[1].name", "duplicate stream name 'chat'");
  expect_error("slo_classes: [{name: a}, {name: a}]\n" + kModels + kWorkload,
               "1: slo_classes[1].name", "duplicate SLO class name 'a'");
  expect_error("tenants: [x, y, x]\n" + kModels + kWorkload, "1: tenants[2]",
               "duplicate tenant name 'x'");
}

TEST(ScenarioErrorsTest, UnknownNamesListTheKnownOnes) {
  expect_error(
      kModels + "workload:\n  streams:\n    - {name: c, model: big, arrival: {rate_per_s: 1}}\n",
      "5: workload.streams[0].model", "unknown model 'big'; known models: llama-3-8b");
  expect_error(kModels + R"(workload:
  streams:
    - {name: c, model: llama-3-8b, class: gold, arrival: {rate_per_s: 1}}
)",
               "5: workload.streams[0].class",
               "unknown SLO class 'gold'; known classes: interactive, standard, batch");
  expect_error("tenants: [default, team-a]\n" + kModels + R"(workload:
  streams:
    - {name: c, model: llama-3-8b, tenant: team-b, arrival: {rate_per_s: 1}}
)",
               "6: workload.streams[0].tenant",
               "unknown tenant 'team-b'; known tenants: default, team-a");
  expect_error("slo_classes: [{name: a, downgrade_to: z}]\n" + kModels + kWorkload,
               "1: slo_classes[0].downgrade_to", "unknown SLO class 'z'; known classes: a");
  expect_error("slo_classes: [{name: a}, {name: b, downgrade_to: a}]\n" + kModels + kWorkload,
               "1: slo_classes[1].downgrade_to", "expected a class of higher rank");
  expect_error(kModels + "trace_mapping: [{model: nope}]\n" + kWorkload,
               "3: trace_mapping[0].model", "unknown model 'nope'");
  expect_error("policy: first-come\n" + kModels + kWorkload, "1: policy",
               "unknown policy 'first-come'; expected one of: fcfs, ");
  expect_error("node: {hardware: a100}\n" + kModels + kWorkload, "1: node.hardware",
               "unknown hardware preset 'a100'; expected one of: a100-sxm-80gb, h100-sxm-80gb, "
               "h200-sxm-141gb, b200-sxm-180gb, mi300x-192gb");
  expect_error("models:\n  - {name: llama-3-8b, tier: small, shape: llama-9}\n" + kWorkload,
               "2: models[0].shape", "unknown model shape preset 'llama-9'");
  expect_error("models:\n  - {name: custom, tier: small}\n" + kWorkload, "2: models[0].shape",
               "the model's name is not a shape preset");
  expect_error("models:\n  - {name: llama-3-8b, tier: medium}\n" + kWorkload, "2: models[0].tier",
               "expected one of small, large, got 'medium'");
}

// ---- placement ---------------------------------------------------------------------------------

TEST(ScenarioErrorsTest, ModelWithoutAGpu) {
  expect_error("models:\n  - {name: llama-3-8b, tier: small, gpus: []}\n" + kWorkload,
               "2: models[0].gpus", "expected at least one GPU");
}

TEST(ScenarioErrorsTest, GpuIndexOutOfRange) {
  expect_error(R"(node: {gpus: 4}
models:
  - name: llama-3-8b
    tier: small
    gpus: [0, 1, 4]
)" + kWorkload,
               "5: models[0].gpus[2]", "GPU index out of range: expected 0 to 3");
  expect_error("models:\n  - {name: llama-3-8b, tier: small, gpus: [1, 1]}\n" + kWorkload,
               "2: models[0].gpus[1]", "listed twice");
  expect_error("models:\n  - {name: llama-3-8b, tier: small, gpus: some}\n" + kWorkload,
               "2: models[0].gpus", "expected 'all' or a list of GPU indices");
}

TEST(ScenarioErrorsTest, AtMostOneLargeModel) {
  expect_error(R"(models:
  - {name: llama-3-8b, tier: small}
  - {name: big1, tier: large, shape: llama-3-70b}
  - {name: big2, tier: large, shape: llama-3-70b}
)" + kWorkload,
               "4: models[2].tier", "expected at most one large model; 'big1' is large already");
}

TEST(ScenarioErrorsTest, LargeModelMustSpanEveryGpu) {
  expect_error(R"(models:
  - {name: llama-3-8b, tier: small}
  - name: big
    tier: large
    shape: llama-3-70b
    gpus: [0, 1, 2, 3]
)" + kWorkload,
               "6: models[1].gpus", "expected a large model to span every GPU of the node");
  expect_error(R"(models:
  - {name: llama-3-8b, tier: small}
  - {name: big, tier: large, shape: llama-3-70b, tensor_parallel: 4}
)" + kWorkload,
               "3: models[1].tensor_parallel", "to equal node.gpus (8), got 4");
}

TEST(ScenarioErrorsTest, SmallModelRunsAtTensorParallelOne) {
  expect_error("models:\n  - {name: llama-3-8b, tier: small, tensor_parallel: 2}\n" + kWorkload,
               "2: models[0].tensor_parallel", "expected 1 for a small model");
}

TEST(ScenarioErrorsTest, NeedsASmallModel) {
  expect_error("models:\n  - {name: big, tier: large, shape: llama-3-70b}\n" + kWorkload,
               "1: models", "expected at least one small model");
}

TEST(ScenarioErrorsTest, BlockSizeAndPrefillChunk) {
  expect_error("node: {kv_block_tokens: 0}\n" + kModels + kWorkload, "1: node.kv_block_tokens",
               "expected a whole number >= 1, got 0");
  expect_error(R"(models:
  - name: llama-3-8b
    tier: small
    prefill_chunk_tokens: 500
)" + kWorkload,
               "4: models[0].prefill_chunk_tokens",
               "expected a multiple of node.kv_block_tokens (16), got 500");
  expect_error("node: {kv_block_tokens: 48}\n" + kModels + kWorkload,
               "3: models[0].prefill_chunk_tokens", "(the default)");
}

TEST(ScenarioErrorsTest, ShapeChecks) {
  expect_error(R"(models:
  - name: llama-3-8b
    tier: small
    shape: {hidden: 4096, q_heads: 32, kv_heads: 8, head_dim: 128, ffn: 14336, parameters_b: 8}
)" + kWorkload,
               "4: models[0].shape.layers", "this key is required");
  expect_error(R"(models:
  - name: llama-3-8b
    tier: small
    shape:
      preset: llama-3-8b
      kv_heads: 12
)" + kWorkload,
               "6: models[0].shape.kv_heads", "expected kv_heads to divide q_heads");
  expect_error(R"(models:
  - {name: llama-3-8b, tier: small}
  - name: big
    tier: large
    shape: {preset: llama-3-70b, q_heads: 60, kv_heads: 6}
)" + kWorkload,
               "5: models[1].shape", "to be divisible by tensor_parallel (8)");
}

TEST(ScenarioErrorsTest, CostModelChecks) {
  expect_error(R"(models:
  - name: llama-3-8b
    tier: small
    cost: {model: linear}
)" + kWorkload,
               "4: models[0].cost", "expected at least one of base_ms");
  expect_error("models:\n  - {name: llama-3-8b, tier: small, cost: {model: magic}}\n" + kWorkload,
               "2: models[0].cost.model", "expected one of roofline, linear, constant");
}

// ---- memory ------------------------------------------------------------------------------------

TEST(ScenarioErrorsTest, WeightsLargerThanHbm) {
  expect_error(R"(node:
  hardware: {preset: h100-sxm-80gb, hbm_gb: 30}
models:
  - {name: llama-3-8b, tier: small}
  - {name: big, tier: large, shape: llama-3-70b}
)" + kWorkload,
               "3: models", "do not fit");
  expect_error(R"(node: {gpus: 1}
models:
  - {name: big, tier: small, shape: llama-3-70b}
workload:
  streams:
    - {name: chat, model: big, arrival: {rate_per_s: 10}}
)",
               "2: models", "models on that GPU: big");
}

// ---- workload ----------------------------------------------------------------------------------

TEST(ScenarioErrorsTest, EmptyWorkload) {
  expect_error(kModels, "1: workload", "expected a workload: streams");
  expect_error(kModels + "workload:\n  streams: []\n", "4: workload.streams",
               "expected a workload: streams");
  expect_error(kModels + "workload:\n", "3: workload", "expected a workload: streams");
}

TEST(ScenarioErrorsTest, StreamsAndTraceTogether) {
  expect_error(kModels + R"(workload:
  streams:
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 10}}
  trace: {path: x.csv}
)",
               "6: workload.trace", "expected either streams or trace, not both");
}

TEST(ScenarioErrorsTest, TraceChecks) {
  const std::string azure =
      std::string(GANGWAY_SOURCE_DIR) + "/data/traces/AzureLLMInferenceTrace_conv.csv";
  expect_error(kModels + "workload:\n  trace:\n    path: no/such/trace.csv\n",
               "5: workload.trace.path", "cannot find the file 'no/such/trace.csv'");
  expect_error(kModels + "workload:\n  trace:\n    path: " + azure + "\n    format: csv\n",
               "6: workload.trace.format", "expected one of azure, mooncake, burstgpt");
  expect_error(kModels + "workload:\n  trace:\n    path: " + azure + "\n    format: mooncake\n",
               "5: workload.trace.path", "expected");
  expect_error(
      kModels + "workload:\n  trace:\n    path: " + azure + "\n    start_s: 50\n    end_s: 20\n",
      "7: workload.trace.end_s", "expected a number of seconds > start_s (50)");
  expect_error(kModels + "workload:\n  trace:\n    path: " + azure +
                   "\n    max_tokens: {fixed: 10, at_least_output: 5}\n",
               "6: workload.trace.max_tokens.fixed", "not both");
  expect_error(kModels + "workload:\n  trace:\n    path: " + azure +
                   "\n    mapping:\n      - {model: llama-3-8b, trace_model: ChatGPT}\n",
               "7: workload.trace.mapping[0].trace_model", "expected only for burstgpt");
}

TEST(ScenarioErrorsTest, EmpiricalLengthChecks) {
  expect_error(kModels + R"(workload:
  streams:
    - name: c
      model: llama-3-8b
      arrival: {rate_per_s: 1}
      prompt_tokens: {dist: empirical}
)",
               "8: workload.streams[0].prompt_tokens", "expected values: [...] or from_trace");
  expect_error(kModels + R"(workload:
  streams:
    - name: c
      model: llama-3-8b
      arrival: {rate_per_s: 1}
      prompt_tokens:
        dist: empirical
        from_trace: {path: missing.csv}
)",
               "10: workload.streams[0].prompt_tokens.from_trace.path",
               "cannot find the file 'missing.csv'");
}

TEST(ScenarioErrorsTest, GangwayPolicyParameters) {
  expect_error("policy: {name: gangway, mode: eager}\n" + kModels + kWorkload, "1: policy.mode",
               "expected one of lease, exclusive");
  expect_error(R"(policy:
  name: gangway
  lease_min_ms: 50
  lease_max_ms: 20
)" + kModels + kWorkload,
               "4: policy.lease_max_ms", "expected lease_max_ms >= lease_min_ms (50 ms)");
}

// ---- admission, overload and faults (docs/overload.md) ------------------------------------------

TEST(ScenarioErrorsTest, AdmissionBadInputNamesTheKey) {
  expect_error("slo_classes: [{name: a, ttft_ms: -5}]\n" + kModels + kWorkload,
               "1: slo_classes[0].ttft_ms", "expected a number > 0");
  expect_error("slo_classes: [{name: a, on_predicted_miss: downgrade}]\n" + kModels + kWorkload,
               "1: slo_classes[0].on_predicted_miss", "downgrade needs a class to downgrade to");
  expect_error(kModels + kWorkload + "admission:\n  rate_limits:\n    - {requests_per_s: 0}\n",
               "8: admission.rate_limits[0].requests_per_s", "expected a number > 0");
  expect_error(kModels + kWorkload + "admission:\n  rate_limits:\n    - {tenant: default}\n",
               "8: admission.rate_limits[0]", "expected requests_per_s or tokens_per_s");
  expect_error(
      kModels + kWorkload + "admission:\n  rate_limits:\n    - {class: gold, tokens_per_s: 5}\n",
      "8: admission.rate_limits[0].class", "unknown SLO class 'gold'");
  expect_error(
      kModels + kWorkload + "admission:\n  rate_limits:\n    - {tenant: x, tokens_per_s: 5}\n",
      "8: admission.rate_limits[0].tenant", "unknown tenant 'x'");
  expect_error(kModels + kWorkload + "admission: {queue_cap: 0}\n", "6: admission.queue_cap",
               "expected");
  expect_error(kModels + kWorkload + "admission: {ladder: {enter: [0.5, 0.4, 1, 2, 3]}}\n",
               "6: admission.ladder.enter[1]", "expected increasing pressures");
  expect_error(kModels + kWorkload + "admission: {ladder: {enter: [1, 2]}}\n",
               "6: admission.ladder.enter", "expected 5 pressures");
}

TEST(ScenarioErrorsTest, WeightShiftBadInputNamesTheKey) {
  struct Case {
    const char* key;
    const char* value;
    const char* what;
  };
  for (const Case& bad :
       {Case{"max_factor", "0.5", "expected"}, Case{"max_factor", "100", "expected"},
        Case{"window_ms", "0", "expected a number > 0"}, Case{"risk_gap", "0", "expected"},
        Case{"dwell_ms", "-1", "expected"}, Case{"enabled", "maybe", "expected"},
        Case{"from_rung", "normal", "expected"}, Case{"factor", "2", "unknown key"}}) {
    SCOPED_TRACE(std::string(bad.key) + ": " + bad.value);
    expect_error(
        kModels + kWorkload + "admission: {weight_shift: {" + bad.key + ": " + bad.value + "}}\n",
        std::string("6: admission.weight_shift.") + bad.key, bad.what);
  }
}

TEST(ScenarioErrorsTest, FaultBadInputNamesTheKey) {
  expect_error(kModels + kWorkload + "faults: [{kind: gpu_loss, at_s: 1}]\n", "6: faults[0]",
               "expected the key 'gpu' (required for kind: gpu_loss)");
  expect_error(kModels + kWorkload + "faults: [{kind: gpu_loss, gpu: 8, at_s: 1}]\n",
               "6: faults[0].gpu", "expected");
  expect_error(kModels + kWorkload + "faults: [{kind: overrun, at_s: 1, duration_s: 2}]\n",
               "6: faults[0]", "expected the key 'factor'");
  expect_error(kModels + kWorkload + "faults: [{kind: stall, gpu: 1, at_s: 1}]\n", "6: faults[0]",
               "expected the key 'duration_s'");
  expect_error(kModels + kWorkload + "faults: [{kind: meteor, at_s: 1}]\n", "6: faults[0].kind",
               "expected one of");
}

}  // namespace
}  // namespace gangway
