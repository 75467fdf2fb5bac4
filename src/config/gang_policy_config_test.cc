// Gang scheduling's bad input: weights of zero or below, a lease horizon shorter than one
// large-model iteration, exclusive-mode limits that are not positive, a large model on fewer than
// all GPUs, an unknown policy. Each is one InputError "FILE:LINE: policy.KEY: ..." that names the
// key and what is allowed (the CLI turns it into exit status 2). Also the oracle switch,
// scheduler.oracle_output_lengths, and the decode-pace reservation, policy.pace_reserve, read
// strictly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/request_level_setup.h"
#include "config/scenario.h"
#include "config/scenario_errors_testing.h"
#include "core/input_error.h"
#include "sched/policy_registry.h"

namespace gangway {
namespace {

void expect_error(const std::string& yaml, const std::string& where, const std::string& what) {
  expect_scenario_error(yaml, "gang.yaml", where, what);
}

// Three lines: a small and a large model.
const std::string kModels = R"(models:
  - {name: s, tier: small, shape: llama-3-8b}
  - {name: l, tier: large, shape: llama-3-70b}
)";
const std::string kWorkload = R"(workload:
  streams:
    - {name: c, model: s, arrival: {rate_per_s: 10}}
)";

std::string with_policy(const std::string& policy) {
  return kModels + "policy: " + policy + "\n" + kWorkload;
}

TEST(GangPolicyConfigTest, WeightsMustBePositive) {
  expect_error(with_policy("{name: gangway, large_weight: 0}"), "4: policy.large_weight",
               "expected a number > 0, got 0");
  expect_error(with_policy("{name: gangway, small_weight: -2}"), "4: policy.small_weight",
               "expected a number > 0, got -2");
}

TEST(GangPolicyConfigTest, LeaseHorizonMustHoldOneLargeIteration) {
  // One decode step of llama-3-70b at TP=8 takes several ms; 2 ms cannot hold it.
  expect_error(with_policy("{name: gangway, lease_min_ms: 1, lease_max_ms: 2}"),
               "4: policy.lease_max_ms",
               "expected the lease horizon to hold at least one large-model iteration");
  expect_error(with_policy("{name: gangway, lease_min_ms: 1}"), "4: policy.lease_min_ms",
               "ms, one decode step of l on this node), got 1 ms");
  expect_error(with_policy("{name: time-slice, slice_period_ms: 100, slice_large_share: 0.01}"),
               "4: policy.slice_large_share", "time-slice's large-model window");
  expect_error(with_policy("{name: gangway-exclusive, exclusive_phase_max_ms: 1}"),
               "4: policy.exclusive_phase_max_ms", "an exclusive phase");
  // Horizons that hold an iteration, and the defaults, load.
  EXPECT_NO_THROW(parse_scenario(with_policy("{name: gangway, lease_min_ms: 20, lease_max_ms: 60}"),
                                 "gang.yaml"));
  EXPECT_NO_THROW(parse_scenario(with_policy("gangway"), "gang.yaml"));
  EXPECT_NO_THROW(parse_scenario(with_policy("time-slice"), "gang.yaml"));
  // Without a large model there is nothing to hold.
  EXPECT_NO_THROW(parse_scenario(R"(models:
  - {name: s, tier: small, shape: llama-3-8b}
policy: {name: gangway, lease_min_ms: 1}
)" + kWorkload,
                                 "gang.yaml"));
}

TEST(GangPolicyConfigTest, MarginsAndDelaysMustNotBeNegative) {
  expect_error(with_policy("{name: gangway, urgency_margin_ms: -1}"), "4: policy.urgency_margin_ms",
               "expected a number >= 0, got -1");
  expect_error(with_policy("{name: gangway, batching_delay_ms: -5}"), "4: policy.batching_delay_ms",
               "expected a number >= 0, got -5");
  const Scenario scenario =
      parse_scenario(with_policy("{name: gangway, urgency_margin_ms: 0}"), "gang.yaml");
  EXPECT_EQ(scenario.policy.urgency_margin, Duration(0));
}

TEST(GangPolicyConfigTest, ExclusiveLimitsMustBePositive) {
  expect_error(with_policy("{name: gangway-exclusive, exclusive_phase_max_ms: 0}"),
               "4: policy.exclusive_phase_max_ms", "expected a number > 0, got 0");
  expect_error(with_policy("{name: gangway-exclusive, exclusive_max_large_wait_ms: -5}"),
               "4: policy.exclusive_max_large_wait_ms", "expected a number > 0, got -5");
  expect_error(with_policy("{name: gangway, max_large_wait_ms: 0}"), "4: policy.max_large_wait_ms",
               "expected a number > 0");
  expect_error(with_policy("{name: gangway-exclusive, overrun_grace_ms: -1}"),
               "4: policy.overrun_grace_ms", "expected a number >= 0");
}

TEST(GangPolicyConfigTest, UnknownPolicyListsTheNames) {
  expect_error(with_policy("gang-way"), "4: policy",
               "unknown policy 'gang-way'; expected one of: fcfs, sm-first, lm-first, time-slice, "
               "easy-backfill, gangway, gangway-lease, gangway-exclusive");
}

TEST(GangPolicyConfigTest, LargeModelNeedsEveryGpu) {
  expect_error(R"(models:
  - {name: s, tier: small, shape: llama-3-8b}
  - {name: l, tier: large, shape: llama-3-70b, tensor_parallel: 4}
)" + kWorkload,
               "3: models[1].tensor_parallel", "to equal node.gpus (8), got 4");
}

TEST(GangPolicyConfigTest, PaceReserveIsAStrictBooleanOfLeaseMode) {
  EXPECT_FALSE(parse_scenario(with_policy("gangway"), "gang.yaml").policy.pace_reserve);
  EXPECT_TRUE(parse_scenario(with_policy("{name: gangway, pace_reserve: true}"), "gang.yaml")
                  .policy.pace_reserve);
  expect_error(with_policy("{name: gangway, pace_reserve: often}"), "4: policy.pace_reserve",
               "true or false");
  expect_error(with_policy("{name: gangway, mode: exclusive, pace_reserve: true}"),
               "4: policy.pace_reserve", "lease mode");
}

// The aliases fix gangway's mode whatever `mode` says (a scenario written for one mode may be run
// under the other's alias): every "which mode" question gets the mode the policy runs.
TEST(GangPolicyConfigTest, GangwayModeOfEachPolicy) {
  PolicySpec spec = default_policy_spec();
  spec.name = "gangway";
  spec.mode = ExecutionMode::kExclusive;
  EXPECT_EQ(gangway_mode(spec), ExecutionMode::kExclusive);
  spec.name = "gangway-lease";
  EXPECT_EQ(gangway_mode(spec), ExecutionMode::kLease);
  EXPECT_FALSE(runs_exclusive(spec));
  spec.name = "gangway-exclusive";
  spec.mode = ExecutionMode::kLease;
  EXPECT_EQ(gangway_mode(spec), ExecutionMode::kExclusive);
  EXPECT_TRUE(runs_exclusive(spec));
  spec.name = "fcfs";
  EXPECT_EQ(gangway_mode(spec), std::nullopt);
  EXPECT_FALSE(runs_exclusive(spec));
}

TEST(GangPolicyConfigTest, OracleOutputLengthsIsAStrictBoolean) {
  EXPECT_FALSE(parse_scenario(with_policy("gangway"), "gang.yaml").scheduler.oracle_predictor);
  const Scenario oracle =
      parse_scenario(kModels + "scheduler: {oracle_output_lengths: true}\n" + kWorkload, "g.yaml");
  EXPECT_TRUE(oracle.scheduler.oracle_predictor);
  expect_error(kModels + "scheduler: {oracle_output_lengths: yes please}\n" + kWorkload,
               "4: scheduler.oracle_output_lengths", "true or false");
  expect_error(kModels + "scheduler: {oracle_lengths: true}\n" + kWorkload,
               "4: scheduler.oracle_lengths", "oracle_output_lengths");
}

}  // namespace
}  // namespace gangway
