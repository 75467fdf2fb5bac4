// A model's roofline settings default to what the node's GPU preset gives (its
// RooflineEfficiencies); a key the scenario sets, in the file or with --set, wins; the default
// node (H100) keeps the settings it always had; a bad value is still reported at its line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/scenario.h"
#include "config/scenario_errors_testing.h"
#include "config/scenario_setting.h"

namespace gangway {
namespace {

// Two lines of node, then the default node's two models, each with `small_cost` / `large_cost`
// as its cost section when given (line 6 for the small model, 8 for the large one when the small
// model has none), then one stream.
std::string scenario_on(const std::string& hardware, const std::string& small_cost = "",
                        const std::string& large_cost = "") {
  const auto cost = [](const std::string& section) {
    return section.empty() ? std::string() : "\n    cost: " + section;
  };
  return "node:\n  hardware: " + hardware + "\nmodels:\n  - name: llama-3-8b\n    tier: small" +
         cost(small_cost) + "\n  - name: llama-3-70b\n    tier: large" + cost(large_cost) +
         "\nworkload:\n  streams: [{name: c, model: llama-3-8b, arrival: {rate_per_s: 1}}]\n";
}

void expect_cost(const CostModelSpec& cost, double compute, double bandwidth, double launch_s) {
  EXPECT_EQ(cost.kind, CostModelKind::kRoofline);
  EXPECT_DOUBLE_EQ(cost.compute_efficiency, compute);
  EXPECT_DOUBLE_EQ(cost.bandwidth_efficiency, bandwidth);
  EXPECT_DOUBLE_EQ(cost.launch_overhead_s, launch_s);
}

TEST(HardwareCostDefaults, H200PresetGivesItsMeasuredFitWhereTheCostSectionIsSilent) {
  const Scenario s = parse_scenario(scenario_on("h200-sxm-141gb"), "h200.yaml");
  expect_cost(s.node.models[0].cost, 0.5, 0.57, 0.0011);
  // The large model keeps its TP=8 compute efficiency and takes the rest from the preset.
  expect_cost(s.node.models[1].cost, 0.4, 0.57, 0.0011);
}

TEST(HardwareCostDefaults, ACustomisedH200KeepsThePresetsEfficiencies) {
  const Scenario s =
      parse_scenario(scenario_on("{preset: h200-sxm-141gb, hbm_gb: 140}"), "h200.yaml");
  EXPECT_EQ(s.node.hardware.name, "h200-sxm-141gb-custom");
  expect_cost(s.node.models[0].cost, 0.5, 0.57, 0.0011);
}

TEST(HardwareCostDefaults, AKeyTheScenarioSetsWinsAndTheOthersComeFromThePreset) {
  const Scenario s = parse_scenario(
      scenario_on("h200-sxm-141gb", "{bandwidth_efficiency: 0.85}", "{launch_overhead_ms: 0.2}"),
      "h200.yaml");
  expect_cost(s.node.models[0].cost, 0.5, 0.85, 0.0011);
  expect_cost(s.node.models[1].cost, 0.4, 0.57, 0.0002);
}

TEST(HardwareCostDefaults, SettingsOnTheCommandLineWinOverThePreset) {
  const std::vector<ScenarioSetting> settings = {
      parse_scenario_setting("models[llama-3-8b].cost.compute_efficiency=0.45"),
      parse_scenario_setting("models[llama-3-8b].cost.bandwidth_efficiency=0.85"),
      parse_scenario_setting("models[llama-3-8b].cost.launch_overhead_ms=0.2"),
      parse_scenario_setting("models[llama-3-70b].cost.compute_efficiency=0.35")};
  const Scenario s = parse_scenario(scenario_on("h200-sxm-141gb"), "h200.yaml", settings);
  expect_cost(s.node.models[0].cost, 0.45, 0.85, 0.0002);
  expect_cost(s.node.models[1].cost, 0.35, 0.57, 0.0011);
}

TEST(HardwareCostDefaults, TheH100NodeKeepsTheVllmClassSettings) {
  for (const char* hardware : {"h100-sxm-80gb", "{preset: h100-sxm-80gb, hbm_gb: 40}"}) {
    SCOPED_TRACE(hardware);
    const Scenario s = parse_scenario(scenario_on(hardware), "h100.yaml");
    expect_cost(s.node.models[0].cost, 0.5, 0.85, 0.0002);
    expect_cost(s.node.models[1].cost, 0.4, 0.85, 0.0002);
  }
  // Without a node section the node is the default one, with its cost settings.
  const NodeSpec node = default_node_spec();
  expect_cost(node.models[0].cost, 0.5, 0.85, 0.0002);
  expect_cost(node.models[1].cost, 0.4, 0.85, 0.0002);
}

TEST(HardwareCostDefaults, UnmeasuredPresetsKeepTheVllmClassSettings) {
  for (const char* hardware : {"a100-sxm-80gb", "b200-sxm-180gb", "mi300x-192gb"}) {
    SCOPED_TRACE(hardware);
    const Scenario s = parse_scenario(scenario_on(hardware), "other.yaml");
    expect_cost(s.node.models[0].cost, 0.5, 0.85, 0.0002);
    expect_cost(s.node.models[1].cost, 0.4, 0.85, 0.0002);
  }
}

TEST(HardwareCostDefaults, ABadValueIsReportedAtItsLineOnEveryPreset) {
  for (const char* hardware : {"h100-sxm-80gb", "h200-sxm-141gb"}) {
    SCOPED_TRACE(hardware);
    expect_bad_scenario(scenario_on(hardware, "{bandwidth_efficiency: 0}"),
                        "6: models[0].cost.bandwidth_efficiency", "expected a number in (0, 1]");
    expect_bad_scenario(scenario_on(hardware, "", "{launch_overhead_ms: -1}"),
                        "8: models[1].cost.launch_overhead_ms", "expected a number >= 0");
  }
}

}  // namespace
}  // namespace gangway
