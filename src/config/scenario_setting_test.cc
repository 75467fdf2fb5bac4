// `--set KEY.PATH=VALUE` changes the scenario's tree before it is read: the value is checked like
// one written in the file, and a bad one is located at "FILE: --set KEY.PATH: ...".
#include "config/scenario_setting.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/scenario.h"
#include "core/input_error.h"

namespace gangway {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kScenario = R"(name: set-test
policy: fcfs
node: {hardware: h100-sxm-80gb}
models:
  - {name: llama-3-8b, tier: small, shape: llama-3-8b}
  - {name: llama-3-70b, tier: large}
workload:
  streams:
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 10}, prompt_tokens: 128}
    - {name: big, model: llama-3-70b, arrival: {rate_per_s: 2}}
)";

Scenario with(const std::vector<std::string>& settings) {
  std::vector<ScenarioSetting> parsed;
  for (const std::string& text : settings) parsed.push_back(parse_scenario_setting(text));
  return parse_scenario(kScenario, "set.yaml", parsed);
}

std::string error_of(const std::vector<std::string>& settings) {
  try {
    with(settings);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return "";
}

TEST(ScenarioSetting, SetsScalarsInMappingsAndListItemsByIndexOrName) {
  const Scenario scenario = with({"seed=9", "workload.streams[0].arrival.rate_per_s=25",
                                  "workload.streams[big].arrival.rate_per_s=3",
                                  "slo_classes=[{name: only, ttft_ms: 100}]"});
  EXPECT_EQ(scenario.seed, 9u);
  EXPECT_DOUBLE_EQ(scenario.streams[0].arrival.rate_per_s, 25);
  EXPECT_DOUBLE_EQ(scenario.streams[1].arrival.rate_per_s, 3);
  ASSERT_EQ(scenario.node.slo_classes.size(), 1u);
  EXPECT_EQ(scenario.node.slo_classes[0].name, "only");
}

TEST(ScenarioSetting, ExpandsShortFormsAndAddsMissingKeys) {
  // policy: fcfs -> {name: fcfs, lease_max_ms: 100}; hardware and prompt_tokens likewise.
  const Scenario scenario =
      with({"policy.lease_max_ms=100", "node.hardware.hbm_gb=90",
            "workload.streams[chat].prompt_tokens.min=64", "admission.queue_cap=7"});
  EXPECT_EQ(scenario.policy.name, "fcfs");
  EXPECT_EQ(scenario.policy.lease_max, std::chrono::milliseconds(100));
  EXPECT_EQ(scenario.node.hardware.name, "h100-sxm-80gb-custom");
  EXPECT_EQ(scenario.scheduler.admission.queue_cap, 7);
}

TEST(ScenarioSetting, AppendsAListItemOnePastTheEnd) {
  const Scenario scenario =
      with({"workload.streams[2]={name: more, model: llama-3-8b, arrival: {rate_per_s: 1}}"});
  ASSERT_EQ(scenario.streams.size(), 3u);
  EXPECT_EQ(scenario.streams[2].name, "more");
}

TEST(ScenarioSetting, BadValuesAreCheckedLikeTheFileAndLocatedAtTheSetting) {
  EXPECT_THAT(error_of({"policy.lease_max_ms=-5"}),
              StartsWith("set.yaml: --set policy.lease_max_ms: expected a number > 0"));
  EXPECT_THAT(error_of({"policy.lease_max_mss=5"}),
              StartsWith("set.yaml: --set policy.lease_max_mss: unknown key; allowed keys here:"));
  EXPECT_THAT(error_of({"workload.streams[chat].arrival.rate_per_s=fast"}),
              StartsWith("set.yaml: --set workload.streams[0].arrival.rate_per_s: expected a "
                         "number"));
  EXPECT_THAT(error_of({"policy=nonesuch"}), StartsWith("set.yaml: --set policy: unknown policy"));
  EXPECT_THAT(error_of({"seed=3", "models[1].tier=huge"}),
              StartsWith("set.yaml: --set models[1].tier: expected one of small, large"));
  // An error the settings did not write keeps its line in the file.
  try {
    parse_scenario(kScenario + "faults: [{kind: stall}]\n", "set.yaml",
                   {parse_scenario_setting("seed=3")});
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), StartsWith("set.yaml:11: faults[0]"));
  }
}

TEST(ScenarioSetting, PathsThatCannotBeFollowedSayWhy) {
  EXPECT_THAT(
      error_of({"workload.streams[9].model=x"}),
      AllOf(StartsWith("set.yaml: --set workload.streams[9].model: "), HasSubstr("has 2 items")));
  EXPECT_THAT(error_of({"workload.streams[nope].model=x"}),
              HasSubstr("has no item named 'nope'; its items are named chat, big"));
  EXPECT_THAT(error_of({"name.first=x"}), HasSubstr("name is 'set-test', not a mapping"));
  EXPECT_THAT(error_of({"workload.streams.model=x"}), HasSubstr("is a list: select an item"));
  EXPECT_THAT(error_of({"policy={unclosed"}), HasSubstr("expected a YAML value"));
}

TEST(ScenarioSetting, ParseNeedsKeyAndEquals) {
  EXPECT_THROW(parse_scenario_setting("no-equals"), InputError);
  EXPECT_THROW(parse_scenario_setting("=5"), InputError);
  const ScenarioSetting setting = parse_scenario_setting("a.b=c=d");
  EXPECT_EQ(setting.key_path, "a.b");
  EXPECT_EQ(setting.value, "c=d");
}

TEST(ScenarioSetting, ADefaultPolicyIsGangwaysLeaseMode) {
  const std::string no_policy = R"(models:
  - {name: llama-3-8b, tier: small}
  - {name: llama-3-70b, tier: large}
workload:
  streams: [{name: chat, model: llama-3-8b, arrival: {rate_per_s: 10}}]
)";
  const Scenario scenario = parse_scenario(no_policy, "default.yaml");
  EXPECT_EQ(scenario.policy.name, "gangway");
  EXPECT_EQ(scenario.policy.mode, ExecutionMode::kLease);
  // A policy mapping without a name is gangway's too.
  const Scenario parameters_only =
      parse_scenario(no_policy + "policy: {lease_max_ms: 100}\n", "default.yaml");
  EXPECT_EQ(parameters_only.policy.name, "gangway");
}

}  // namespace
}  // namespace gangway
