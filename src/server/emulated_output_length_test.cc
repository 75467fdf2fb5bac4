// The emulated engine's output-length rule: ignore_eos, then min_tokens, then the configured
// rule (by default the scenario's own distribution for the model and class), capped by
// max_tokens.
#include "server/emulated_output_length.h"

#include <gtest/gtest.h>

namespace gangway {
namespace {

Scenario scenario_with_constant_outputs() {
  return parse_scenario(R"(
models:
  - {name: a, tier: small, shape: llama-3-8b}
  - {name: b, tier: small, shape: llama-3-8b}
workload:
  streams:
    - {name: one, model: a, class: standard, arrival: {rate_per_s: 1}, prompt_tokens: 8,
       output_tokens: 17, max_tokens: 100}
    - {name: two, model: a, class: interactive, arrival: {rate_per_s: 1}, prompt_tokens: 8,
       output_tokens: 5, max_tokens: 100}
)",
                        "rule.yaml");
}

TEST(EmulatedOutputLengthTest, IgnoreEosAndMinTokensWin) {
  const Scenario scenario = scenario_with_constant_outputs();
  EmulatedOutputLength rule(scenario, EmulatedOutputSpec{});
  EXPECT_EQ(rule.choose(ModelId(0), SloClassId(0), 40, true, std::nullopt), 40);
  EXPECT_EQ(rule.choose(ModelId(0), SloClassId(0), 40, false, 12), 12);
  EXPECT_EQ(rule.choose(ModelId(0), SloClassId(0), 40, false, 90), 40);
}

TEST(EmulatedOutputLengthTest, DrawsFromTheStreamOfTheModelAndClass) {
  const Scenario scenario = scenario_with_constant_outputs();
  EmulatedOutputLength rule(scenario, EmulatedOutputSpec{});
  const SloClassId interactive = *scenario.node.find_slo_class("interactive");
  const SloClassId standard = *scenario.node.find_slo_class("standard");
  const SloClassId batch = *scenario.node.find_slo_class("batch");
  EXPECT_EQ(rule.choose(ModelId(0), interactive, 100, false, std::nullopt), 5);
  EXPECT_EQ(rule.choose(ModelId(0), standard, 100, false, std::nullopt), 17);
  // No stream for (a, batch): the model's first stream.
  EXPECT_EQ(rule.choose(ModelId(0), batch, 100, false, std::nullopt), 17);
  EXPECT_EQ(rule.choose(ModelId(0), standard, 10, false, std::nullopt), 10);
  // Model b has no stream: the fallback (geometric, mean 128), capped.
  for (int i = 0; i < 100; ++i) {
    const int32_t n = rule.choose(ModelId(1), standard, 300, false, std::nullopt);
    EXPECT_GE(n, 1);
    EXPECT_LE(n, 300);
  }
}

TEST(EmulatedOutputLengthTest, MaxTokensRule) {
  const Scenario scenario = scenario_with_constant_outputs();
  EmulatedOutputSpec spec;
  spec.kind = EmulatedOutputSpec::Kind::kMaxTokens;
  EmulatedOutputLength rule(scenario, spec);
  EXPECT_EQ(rule.choose(ModelId(0), SloClassId(0), 33, false, std::nullopt), 33);
}

}  // namespace
}  // namespace gangway
