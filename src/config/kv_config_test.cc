// The scheduler section's KV, caching, preemption and routing keys: read into SchedulerOptions,
// and every bad value (an unknown routing rule, dynamic-split bounds, swap without host memory,
// a KV pool that weights leave no room for) is one located InputError naming its key.
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

const std::string kRest = R"(models:
  - {name: llama-3-8b, tier: small}
  - {name: llama-3-70b, tier: large}
workload:
  streams:
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 10}}
)";

std::string error_of(const std::string& yaml) {
  return scenario_error_of(yaml, "kv.yaml");
}

TEST(KvConfig, DefaultsAreStaticSplitCostPreemptionAndPredictedTtftRouting) {
  const Scenario scenario = parse_scenario(kRest, "kv.yaml");
  const SchedulerOptions& options = scenario.scheduler;
  EXPECT_EQ(options.kv_split, KvSplit::kStatic);
  EXPECT_EQ(options.preemption, PreemptionPolicy::kCost);
  EXPECT_EQ(options.routing, "predicted-ttft");
  EXPECT_TRUE(options.prefix_caching);
  EXPECT_FALSE(options.host_prefix_cache);
  EXPECT_TRUE(options.lm_cache_aware_batching);
}

TEST(KvConfig, EveryKeyIsRead) {
  const Scenario scenario = parse_scenario(R"(scheduler:
  large_kv_fraction: 0.4
  kv_admission_watermark: 0.02
  routing: sglang
  kv_split: dynamic
  large_kv_fraction_min: 0.25
  large_kv_fraction_max: 0.75
  kv_rebalance_step: 0.1
  kv_rebalance_interval_ms: 20
  prefix_caching: true
  host_prefix_cache: false
  lm_cache_aware_batching: false
  preemption: swap
)" + kRest,
                                           "kv.yaml");
  const SchedulerOptions& options = scenario.scheduler;
  EXPECT_DOUBLE_EQ(options.large_kv_fraction, 0.4);
  EXPECT_EQ(options.routing, "sglang");
  EXPECT_EQ(options.kv_split, KvSplit::kDynamic);
  EXPECT_DOUBLE_EQ(options.large_kv_fraction_min, 0.25);
  EXPECT_DOUBLE_EQ(options.large_kv_fraction_max, 0.75);
  EXPECT_DOUBLE_EQ(options.kv_rebalance_step, 0.1);
  EXPECT_EQ(options.kv_rebalance_interval, std::chrono::milliseconds(20));
  EXPECT_FALSE(options.host_prefix_cache);
  EXPECT_FALSE(options.lm_cache_aware_batching);
  EXPECT_EQ(options.preemption, PreemptionPolicy::kSwap);
}

TEST(KvConfig, AnUnknownRoutingRuleListsTheKnownOnes) {
  const std::string message = error_of("scheduler: {routing: random}\n" + kRest);
  EXPECT_THAT(message, StartsWith("kv.yaml:1: scheduler.routing: "));
  EXPECT_THAT(message, HasSubstr("predicted-ttft"));
  EXPECT_THAT(message, HasSubstr("sglang"));
}

TEST(KvConfig, DynamicSplitKeysNeedTheDynamicSplitAndOrderedBounds) {
  EXPECT_THAT(error_of("scheduler: {large_kv_fraction_min: 0.2}\n" + kRest),
              HasSubstr("scheduler.large_kv_fraction_min: is read only with kv_split: dynamic"));
  const std::string message = error_of(
      "scheduler: {kv_split: dynamic, large_kv_fraction: 0.5, large_kv_fraction_min: 0.6}\n" +
      kRest);
  EXPECT_THAT(message, StartsWith("kv.yaml:1: scheduler.large_kv_fraction: "));
  EXPECT_THAT(message, HasSubstr("large_kv_fraction_min (0.6) <= large_kv_fraction (0.5)"));
  EXPECT_THAT(error_of("scheduler: {kv_split: sometimes}\n" + kRest),
              HasSubstr("scheduler.kv_split"));
}

TEST(KvConfig, SwapWithoutHostMemoryNamesBothKeys) {
  const std::string message =
      error_of("node: {host_memory_gib: 0}\nscheduler: {preemption: swap}\n" + kRest);
  EXPECT_THAT(message, StartsWith("kv.yaml:2: scheduler.preemption: "));
  EXPECT_THAT(message, HasSubstr("node.host_memory_gib is 0"));
  // Cost-based preemption simply never swaps without room.
  EXPECT_NO_THROW(
      parse_scenario("node: {host_memory_gib: 0}\nscheduler: {preemption: cost}\n" + kRest, "x"));
}

TEST(KvConfig, ABlockSizeThatDoesNotDivideTheChunkNamesBothKeys) {
  const std::string message = error_of(R"(node: {kv_block_tokens: 48}
models:
  - {name: llama-3-8b, tier: small}
workload:
  streams:
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 10}}
)");
  EXPECT_THAT(message, HasSubstr("prefill_chunk_tokens"));
  EXPECT_THAT(message, HasSubstr("node.kv_block_tokens (48)"));
}

TEST(KvConfig, AKvPoolThatComesOutNegativeAfterWeightsIsAnError) {
  const std::string message = error_of("node: {activation_reserve_gb: 60}\n" + kRest);
  EXPECT_THAT(message, HasSubstr("models"));
  EXPECT_THAT(message, HasSubstr("activation_reserve_gb"));
  EXPECT_THAT(message, HasSubstr("KV pool"));
}

TEST(KvConfig, TheDynamicSplitsExtremesMustLeaveEveryPoolABlock) {
  // At large_kv_fraction_max = 0.99999 the small model's pool has no block left.
  const std::string message =
      error_of("scheduler: {kv_split: dynamic, large_kv_fraction_max: 0.9999999}\n" + kRest);
  EXPECT_THAT(message, HasSubstr("no room for even one KV block"));
}

}  // namespace
}  // namespace gangway
