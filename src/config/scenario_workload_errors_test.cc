// Bad scenario input about what runs on the node: the workload (streams, traces, empirical
// lengths), the gangway policy's parameters, admission and overload settings, and faults. Each is
// one located InputError (scenario_errors_testing.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/scenario_errors_testing.h"

namespace gangway {
namespace {

// ---- workload ----------------------------------------------------------------------------------

TEST(ScenarioErrorsTest, EmptyWorkload) {
  expect_bad_scenario(kSmallModelYaml, "1: workload", "expected a workload: streams");
  expect_bad_scenario(kSmallModelYaml + "workload:\n  streams: []\n", "4: workload.streams",
                      "expected a workload: streams");
  expect_bad_scenario(kSmallModelYaml + "workload:\n", "3: workload",
                      "expected a workload: streams");
}

TEST(ScenarioErrorsTest, StreamsAndTraceTogether) {
  expect_bad_scenario(kSmallModelYaml + R"(workload:
  streams:
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 10}}
  trace: {path: x.csv}
)",
                      "6: workload.trace", "expected either streams or trace, not both");
}

TEST(ScenarioErrorsTest, TraceChecks) {
  const std::string azure =
      std::string(GANGWAY_SOURCE_DIR) + "/data/traces/AzureLLMInferenceTrace_conv.csv";
  expect_bad_scenario(kSmallModelYaml + "workload:\n  trace:\n    path: no/such/trace.csv\n",
                      "5: workload.trace.path", "cannot find the file 'no/such/trace.csv'");
  expect_bad_scenario(
      kSmallModelYaml + "workload:\n  trace:\n    path: " + azure + "\n    format: csv\n",
      "6: workload.trace.format", "expected one of azure, mooncake, burstgpt");
  expect_bad_scenario(
      kSmallModelYaml + "workload:\n  trace:\n    path: " + azure + "\n    format: mooncake\n",
      "5: workload.trace.path", "expected");
  expect_bad_scenario(kSmallModelYaml + "workload:\n  trace:\n    path: " + azure +
                          "\n    start_s: 50\n    end_s: 20\n",
                      "7: workload.trace.end_s", "expected a number of seconds > start_s (50)");
  expect_bad_scenario(kSmallModelYaml + "workload:\n  trace:\n    path: " + azure +
                          "\n    max_tokens: {fixed: 10, at_least_output: 5}\n",
                      "6: workload.trace.max_tokens.fixed", "not both");
  expect_bad_scenario(kSmallModelYaml + "workload:\n  trace:\n    path: " + azure +
                          "\n    mapping:\n      - {model: llama-3-8b, trace_model: ChatGPT}\n",
                      "7: workload.trace.mapping[0].trace_model", "expected only for burstgpt");
}

TEST(ScenarioErrorsTest, EmpiricalLengthChecks) {
  expect_bad_scenario(kSmallModelYaml + R"(workload:
  streams:
    - name: c
      model: llama-3-8b
      arrival: {rate_per_s: 1}
      prompt_tokens: {dist: empirical}
)",
                      "8: workload.streams[0].prompt_tokens",
                      "expected values: [...] or from_trace");
  expect_bad_scenario(kSmallModelYaml + R"(workload:
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
  expect_bad_scenario(
      "policy: {name: gangway, mode: eager}\n" + kSmallModelYaml + kChatWorkloadYaml,
      "1: policy.mode", "expected one of lease, exclusive");
  expect_bad_scenario(R"(policy:
  name: gangway
  lease_min_ms: 50
  lease_max_ms: 20
)" + kSmallModelYaml + kChatWorkloadYaml,
                      "4: policy.lease_max_ms", "expected lease_max_ms >= lease_min_ms (50 ms)");
}

// ---- admission, overload and faults (docs/overload.md) ------------------------------------------

TEST(ScenarioErrorsTest, AdmissionBadInputNamesTheKey) {
  expect_bad_scenario(
      "slo_classes: [{name: a, ttft_ms: -5}]\n" + kSmallModelYaml + kChatWorkloadYaml,
      "1: slo_classes[0].ttft_ms", "expected a number > 0");
  expect_bad_scenario("slo_classes: [{name: a, on_predicted_miss: downgrade}]\n" + kSmallModelYaml +
                          kChatWorkloadYaml,
                      "1: slo_classes[0].on_predicted_miss",
                      "downgrade needs a class to downgrade to");
  expect_bad_scenario(kSmallModelYaml + kChatWorkloadYaml +
                          "admission:\n  rate_limits:\n    - {requests_per_s: 0}\n",
                      "8: admission.rate_limits[0].requests_per_s", "expected a number > 0");
  expect_bad_scenario(
      kSmallModelYaml + kChatWorkloadYaml + "admission:\n  rate_limits:\n    - {tenant: default}\n",
      "8: admission.rate_limits[0]", "expected requests_per_s or tokens_per_s");
  expect_bad_scenario(kSmallModelYaml + kChatWorkloadYaml +
                          "admission:\n  rate_limits:\n    - {class: gold, tokens_per_s: 5}\n",
                      "8: admission.rate_limits[0].class", "unknown SLO class 'gold'");
  expect_bad_scenario(kSmallModelYaml + kChatWorkloadYaml +
                          "admission:\n  rate_limits:\n    - {tenant: x, tokens_per_s: 5}\n",
                      "8: admission.rate_limits[0].tenant", "unknown tenant 'x'");
  expect_bad_scenario(kSmallModelYaml + kChatWorkloadYaml + "admission: {queue_cap: 0}\n",
                      "6: admission.queue_cap", "expected");
  expect_bad_scenario(
      kSmallModelYaml + kChatWorkloadYaml + "admission: {ladder: {enter: [0.5, 0.4, 1, 2, 3]}}\n",
      "6: admission.ladder.enter[1]", "expected increasing pressures");
  expect_bad_scenario(
      kSmallModelYaml + kChatWorkloadYaml + "admission: {ladder: {enter: [1, 2]}}\n",
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
    expect_bad_scenario(kSmallModelYaml + kChatWorkloadYaml + "admission: {weight_shift: {" +
                            bad.key + ": " + bad.value + "}}\n",
                        std::string("6: admission.weight_shift.") + bad.key, bad.what);
  }
}

TEST(ScenarioErrorsTest, FaultBadInputNamesTheKey) {
  expect_bad_scenario(kSmallModelYaml + kChatWorkloadYaml + "faults: [{kind: gpu_loss, at_s: 1}]\n",
                      "6: faults[0]", "expected the key 'gpu' (required for kind: gpu_loss)");
  expect_bad_scenario(
      kSmallModelYaml + kChatWorkloadYaml + "faults: [{kind: gpu_loss, gpu: 8, at_s: 1}]\n",
      "6: faults[0].gpu", "expected");
  expect_bad_scenario(
      kSmallModelYaml + kChatWorkloadYaml + "faults: [{kind: overrun, at_s: 1, duration_s: 2}]\n",
      "6: faults[0]", "expected the key 'factor'");
  expect_bad_scenario(
      kSmallModelYaml + kChatWorkloadYaml + "faults: [{kind: stall, gpu: 1, at_s: 1}]\n",
      "6: faults[0]", "expected the key 'duration_s'");
  expect_bad_scenario(kSmallModelYaml + kChatWorkloadYaml + "faults: [{kind: meteor, at_s: 1}]\n",
                      "6: faults[0].kind", "expected one of");
}

}  // namespace
}  // namespace gangway
