// Seeded simulations of the KV layer under load, with the scheduler's invariants (block
// accounting included) checked after every event in test builds: prefix workloads under every
// routing rule, a lease-heavy long-context workload under the dynamic split (preemption by cost),
// and a Mooncake trace replay with the host tier. Each checks that every request ends exactly
// once and that the caches do what they are for.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "config/scenario.h"
#include "config/scenario_simulation.h"
#include "config/scenario_source.h"
#include "sched/policy_registry.h"
#include "sched/router_registry.h"
#include "sim/simulator.h"

namespace gangway {
namespace {

struct Outcome {
  SimulationResult result;
  KvStatistics kv;
  double large_kv_fraction = 0;
};

Outcome simulate(const Scenario& scenario, const std::string& routing) {
  std::unique_ptr<RequestSource> source = make_request_source(scenario);
  SchedulerOptions scheduler = scenario.scheduler;
  scheduler.routing = routing;
  // The caches and routing on everything offered (admission control is tests/sim/overload).
  scheduler.admission.enabled = false;
  scheduler.admission.queue_order = QueueOrder::kArrival;
  scheduler.admission.queue_cap = int64_t{1} << 40;
  Simulator simulator(scenario.node, scheduler, make_policy(scenario.policy), nullptr, *source,
                      simulation_options_of(scenario));
  Outcome outcome{simulator.run(), {}, 0};
  outcome.kv = simulator.scheduler().state().kv_stats;
  outcome.large_kv_fraction = simulator.scheduler().state().large_kv_fraction;
  return outcome;
}

void expect_every_request_ended_once(const SimulationResult& result, const std::string& label) {
  const RequestStats& total = result.metrics.total();
  EXPECT_GT(total.arrived(), 0u) << label;
  EXPECT_EQ(total.arrived(),
            total.completed() + total.rejected() + total.failed() + total.cancelled())
      << label;
}

PrefixCacheCounters small_model_counters(const KvStatistics& kv) {
  PrefixCacheCounters total;
  for (size_t p = 0; p + 1 < kv.pools.size(); ++p) total.add(kv.pools[p]);
  return total;
}

TEST(KvSimulation, PrefixGroupsAndSessionsUnderEveryRoutingRule) {
  const Scenario scenario = parse_scenario(R"(seed: 11
duration_s: 6
drain_s: 60
models:
  - {name: llama-3-8b, tier: small}
  - {name: llama-3-70b, tier: large}
policy: {name: gangway, mode: lease}
workload:
  streams:
    - name: chat
      model: llama-3-8b
      arrival: {rate_per_s: 150}
      prompt_tokens: {dist: lognormal, mean: 150, p99: 800, max: 4000}
      output_tokens: {dist: geometric, mean: 24, max: 128}
      max_tokens: 128
      prefix: {groups: 48, group_tokens: 1536, zipf_s: 0.8}
      sessions: {new_session_probability: 0.4, think_time_s: 1}
    - name: lm
      model: llama-3-70b
      class: standard
      arrival: {rate_per_s: 6}
      prompt_tokens: {dist: lognormal, mean: 150, p99: 800}
      output_tokens: {dist: geometric, mean: 24, max: 128}
      max_tokens: 128
      prefix: {groups: 4, group_tokens: 1024}
)",
                                           "prefix.yaml");
  std::map<std::string, double> hit_rate;
  for (const std::string& routing : router_names()) {
    const Outcome outcome = simulate(scenario, routing);
    expect_every_request_ended_once(outcome.result, routing);
    hit_rate[routing] = small_model_counters(outcome.kv).token_hit_rate();
    EXPECT_GT(outcome.kv.pools.back().token_hit_rate(), 0.5)
        << routing << ": the large model's four group prompts stay cached";
  }
  // Routing that follows the cache reuses more than routing that ignores it.
  EXPECT_GT(hit_rate["cache-only"], hit_rate["round-robin"]);
  EXPECT_GT(hit_rate["predicted-ttft"], hit_rate["round-robin"]);
  EXPECT_GT(hit_rate["sglang"], hit_rate["round-robin"]);
}

TEST(KvSimulation, LeaseHeavyLongContextsUnderTheDynamicSplitPreemptByCost) {
  const Scenario scenario = parse_scenario(R"(seed: 4
duration_s: 8
drain_s: 120
scheduler: {kv_split: dynamic, large_kv_fraction: 0.3, large_kv_fraction_min: 0.2,
            large_kv_fraction_max: 0.8, kv_rebalance_interval_ms: 0}
models:
  - {name: llama-3-8b, tier: small, max_batched_tokens: 2048, prefill_chunk_tokens: 1024}
  - {name: llama-3-70b, tier: large, max_batched_tokens: 4096, prefill_chunk_tokens: 2048}
policy: {name: gangway, mode: lease, large_weight: 3}
workload:
  streams:
    - name: sm-long
      model: llama-3-8b
      class: batch
      arrival: {rate_per_s: 12}
      prompt_tokens: {dist: lognormal, mean: 22000, p99: 31000, max: 31000}
      output_tokens: {dist: geometric, mean: 500, max: 1500}
      max_tokens: 1500
    - name: lm-long
      model: llama-3-70b
      class: batch
      arrival: {rate_per_s: 1.5}
      prompt_tokens: {dist: lognormal, mean: 22000, p99: 31000, max: 31000}
      output_tokens: {dist: geometric, mean: 500, max: 1500}
      max_tokens: 1500
)",
                                           "lease-heavy.yaml");
  const Outcome outcome = simulate(scenario, "predicted-ttft");
  expect_every_request_ended_once(outcome.result, "lease-heavy");
  EXPECT_GT(outcome.kv.split_moves_to_large + outcome.kv.split_moves_to_small, 0)
      << "memory moved between the tiers";
  int64_t taken_off = 0;
  for (const auto& model : outcome.kv.preemptions_by_model) {
    taken_off += model[static_cast<int>(PreemptionMode::kSwap)].count +
                 model[static_cast<int>(PreemptionMode::kRecompute)].count;
  }
  EXPECT_GT(taken_off, 0) << "memory ran out for someone: swapped or recomputed";
  const auto paused = outcome.kv.preemptions_by_reason[static_cast<int>(PreemptionReason::kGang)]
                                                      [static_cast<int>(PreemptionMode::kPause)];
  EXPECT_GT(paused, 0) << "leases paused resident small sequences in place";
}

TEST(KvSimulation, MooncakeReplayKeepsEvictedPrefixesOnTheHost) {
  Scenario scenario = parse_scenario(std::string(R"(seed: 2
duration_s: 120
drain_s: 300
node: {host_memory_gib: 1024}
models:
  - {name: llama-3-8b, tier: small, gpus: [0, 1], max_context_tokens: 131072}
scheduler: {host_prefix_cache: true}
workload:
  trace:
    path: )") + GANGWAY_SOURCE_DIR + R"(/data/traces/mooncake_conversation_trace.jsonl
    format: mooncake
    rate_scale: 1.0
    end_s: 120
)",
                                     "mooncake.yaml");
  const Outcome outcome = simulate(scenario, "predicted-ttft");
  expect_every_request_ended_once(outcome.result, "mooncake");
  const PrefixCacheCounters counters = small_model_counters(outcome.kv);
  // An infinite cache would reuse 12.0 % of these two minutes' prompt tokens (the longest run of
  // already-seen hash_ids per request, 512 tokens each, capped at the prompt). Two GPUs' caches
  // (about 0.9 M tokens) turn over within the window; with 1 TiB of host memory keeping what
  // they evict, the node comes within about a point of the reference (10.9 % measured).
  EXPECT_GT(counters.token_hit_rate(), 0.10);
  EXPECT_LE(counters.token_hit_rate(), 0.120);
  EXPECT_GT(counters.host_tokens, 0);
}

}  // namespace
}  // namespace gangway
