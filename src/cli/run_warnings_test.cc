#include "cli/run_warnings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "config/scenario_setting.h"

namespace gangway {
namespace run_warnings_test {

using ::testing::HasSubstr;

// The warning the peak example gives under `settings` (each KEY=VALUE as --set takes it).
std::string pace_warning(const std::vector<std::string>& settings) {
  std::vector<ScenarioSetting> parsed;
  for (const std::string& setting : settings) parsed.push_back(parse_scenario_setting(setting));
  const Scenario scenario =
      load_scenario(std::string(GANGWAY_SOURCE_DIR) + "/examples/peak-mixed.yaml", parsed);
  std::ostringstream err;
  warn_if_pace_reserve_cannot_pace_one(scenario.node, scenario.policy, err);
  return err.str();
}

// The peak example's large model takes about 11.7 ms for a lone decode step, 23 % of its
// interactive class's 50 ms TPOT target: more than the 1/7 the default weights guarantee it.
TEST(RunWarnings, PaceReserveSaysWhenTheGuaranteedShareCannotPaceOneSequence) {
  const std::string warning = pace_warning({"policy.pace_reserve=true"});
  EXPECT_THAT(warning, HasSubstr("warning: policy.pace_reserve: pacing one llama-3-70b sequence "
                                 "at the TPOT target of class 'interactive' (50 ms) takes 23 %"));
  EXPECT_THAT(warning, HasSubstr("guaranteed share (14 %)"));
  EXPECT_THAT(warning, HasSubstr("Raise policy.large_weight to at least 1.83"));
  // At that weight the guaranteed share paces one sequence: nothing to say.
  EXPECT_EQ(pace_warning({"policy.pace_reserve=true", "policy.large_weight=1.9"}), "");
  // Under split: demand the guarantee is large_share_min.
  EXPECT_THAT(pace_warning({"policy.pace_reserve=true", "policy.split=demand",
                            "policy.large_share_min=0.1"}),
              HasSubstr("Raise policy.large_share_min to at least 0.23"));
  EXPECT_EQ(pace_warning({"policy.pace_reserve=true", "policy.split=demand"}), "");
}

TEST(RunWarnings, NoPaceWarningWithoutTheReservation) {
  EXPECT_EQ(pace_warning({}), "");
  // Policies other than gangway's lease mode read no pace_reserve.
  EXPECT_EQ(pace_warning({"policy.pace_reserve=true", "policy.name=fcfs"}), "");
  EXPECT_EQ(pace_warning({"policy.pace_reserve=true", "policy.name=gangway-exclusive"}), "");
  EXPECT_THAT(pace_warning({"policy.pace_reserve=true", "policy.name=gangway-lease"}),
              HasSubstr("Raise policy.large_weight to at least 1.83"));
}

// A target shorter than one decode step (about 11.7 ms here) fits no share of the node: the
// remedy is a looser target (the step over the guaranteed share), whatever the split.
TEST(RunWarnings, PaceTargetShorterThanOneDecodeStepAsksForALooserTarget) {
  EXPECT_THAT(pace_warning({"policy.pace_reserve=true", "slo_classes[interactive].tpot_ms=5"}),
              HasSubstr("Raise tpot_ms of class 'interactive' to at least 81."));
  EXPECT_THAT(pace_warning({"policy.pace_reserve=true", "policy.split=demand",
                            "slo_classes[interactive].tpot_ms=5"}),
              HasSubstr("Raise tpot_ms of class 'interactive' to at least 39.0"));
  // With no guaranteed share at all, both must change.
  EXPECT_THAT(pace_warning({"policy.pace_reserve=true", "policy.split=demand",
                            "policy.large_share_min=0", "slo_classes[interactive].tpot_ms=5"}),
              HasSubstr("Raise policy.large_share_min above 0 and tpot_ms of class 'interactive' "
                        "above 11.7"));
}

}  // namespace run_warnings_test
}  // namespace gangway
