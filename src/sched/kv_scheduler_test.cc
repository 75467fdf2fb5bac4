// The scheduler's KV layer end to end on small hand-made cases with known answers: prefix hits
// and their statistics, the host tier, preemption chosen by cost (swap, recompute, pause in
// place), cache-aware batch formation for the large model, and the dynamic split. Every event
// runs the invariant checks (test builds), including the block accounting.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/time_for_tests.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

constexpr int32_t kBlock = 16;

// Content-chained block hashes for a prompt made of segments (content id, blocks).
std::vector<BlockHash> hashes_of(const std::vector<std::pair<uint64_t, int>>& segments) {
  std::vector<BlockHash> out;
  uint64_t previous = 0x6a09e667f3bcc908ULL;
  for (const auto& [content, blocks] : segments) {
    for (int i = 0; i < blocks; ++i) {
      uint64_t x =
          previous * 0x9e3779b97f4a7c15ULL ^ (content * 1000003 + static_cast<uint64_t>(i));
      x ^= x >> 31;
      x *= 0xbf58476d1ce4e5b9ULL;
      previous = x ^ (x >> 29);
      out.push_back(previous);
    }
  }
  return out;
}

RequestSpec request(uint64_t id, ModelId model, int prompt, int max_tokens, Time arrival,
                    std::vector<BlockHash> prefix = {}) {
  RequestSpec spec;
  spec.id = RequestId(id);
  spec.model = model;
  spec.slo_class = SloClassId(2);  // batch: no deadlines in the way
  spec.arrival = arrival;
  spec.prompt_tokens = prompt;
  spec.max_tokens = max_tokens;
  spec.prefix_blocks = std::move(prefix);
  return spec;
}

// One GPU with only the small model; its KV pool holds exactly `blocks` blocks (the activation
// reserve takes the rest of HBM). Iterations take a constant 10 ms unless `roofline`.
NodeSpec small_node(int64_t blocks, bool roofline = false, int gpus = 1) {
  NodeSpec node = default_node_spec();
  node.gpu_count = gpus;
  node.models.pop_back();
  ModelSpec& model = node.models[0];
  model.gpus.clear();
  for (int g = 0; g < gpus; ++g) model.gpus.emplace_back(g);
  if (!roofline) {
    model.cost.kind = CostModelKind::kConstant;
    model.cost.constant_iteration_s = 0.010;
  }
  const int64_t block_bytes = model.kv_bytes_per_token_per_gpu() * node.kv_block_tokens;
  const auto weights = static_cast<int64_t>(std::llround(model.weight_bytes_per_gpu()));
  node.activation_reserve_bytes = node.hardware.hbm_bytes - weights - blocks * block_bytes;
  return node;
}

std::unique_ptr<Scheduler> make(const NodeSpec& node, SchedulerOptions options = {},
                                const std::string& policy = "fcfs") {
  options.kv_admission_watermark = 0.0;
  PolicySpec spec;
  spec.name = policy;
  return std::make_unique<Scheduler>(node, options, make_policy(spec), nullptr);
}

// Completes GPU 0's iterations until `id` finishes; returns its record.
RequestRecord run_until_finished(Scheduler& scheduler, RequestId id, Time& now,
                                 Duration step = milliseconds(10)) {
  Effects& effects = scheduler.effects();
  for (int i = 0; i < 10000; ++i) {
    for (const RequestRecord& record : effects.finished) {
      if (record.id == id) {
        RequestRecord found = record;
        effects.clear();
        return found;
      }
    }
    effects.clear();
    now += step;
    if (scheduler.state().gpus[0].small_busy) {
      scheduler.on_iteration_done(EngineRef::small(GpuId(0)), {}, now);
    } else {
      scheduler.on_timer(now);
    }
  }
  ADD_FAILURE() << "request " << id.value() << " never finished";
  return RequestRecord{};
}

TEST(PrefixCache, ASecondIdenticalPromptReusesAllButItsLastToken) {
  auto scheduler = make(small_node(64));
  const std::vector<BlockHash> prefix = hashes_of({{1, 6}});  // 96 of 100 tokens hashed
  Time now;
  scheduler->submit(request(1, ModelId(0), 100, 2, now, prefix), now);
  EXPECT_EQ(run_until_finished(*scheduler, RequestId(1), now).cached_prompt_tokens, 0);
  scheduler->submit(request(2, ModelId(0), 100, 2, now, prefix), now);
  ASSERT_EQ(scheduler->effects().launches.size(), 1u);
  EXPECT_EQ(scheduler->effects().launches[0].entries[0].prefill_tokens, 4)
      << "only the tokens after the six cached blocks are computed";
  EXPECT_EQ(scheduler->effects().launches[0].entries[0].context_tokens, 96);
  EXPECT_EQ(run_until_finished(*scheduler, RequestId(2), now).cached_prompt_tokens, 96);

  // A prompt that is exactly six blocks long still computes its last block: one token must be
  // computed to sample the first output token.
  scheduler->submit(request(3, ModelId(0), 96, 2, now, prefix), now);
  EXPECT_EQ(run_until_finished(*scheduler, RequestId(3), now).cached_prompt_tokens, 80);

  const PrefixCacheCounters& counters = scheduler->state().kv_stats.pools[0];
  EXPECT_EQ(counters.requests, 3);
  EXPECT_EQ(counters.hit_requests, 2);
  EXPECT_EQ(counters.prompt_tokens, 296);
  EXPECT_EQ(counters.cached_tokens, 176);
}

TEST(PrefixCache, HitRatesOnAHandMadePatternHaveTheKnownAnswer) {
  auto scheduler = make(small_node(256));
  // System prompt S (4 blocks); A = S + a (2 blocks); B = S + b (2 blocks); each 97 tokens.
  const std::vector<BlockHash> a = hashes_of({{0, 4}, {1, 2}});
  const std::vector<BlockHash> b = hashes_of({{0, 4}, {2, 2}});
  const std::vector<BlockHash> d = hashes_of({{3, 6}});
  Time now;
  const std::vector<std::pair<std::vector<BlockHash>, int>> pattern = {
      {a, 0},   // cold
      {b, 64},  // shares S
      {a, 96},  // all of A's six blocks
      {d, 0},   // nothing in common
      {b, 96},  // all of B's
  };
  uint64_t id = 1;
  int64_t cached = 0;
  for (const auto& [prefix, expected] : pattern) {
    scheduler->submit(request(id, ModelId(0), 97, 3, now, prefix), now);
    EXPECT_EQ(run_until_finished(*scheduler, RequestId(id), now).cached_prompt_tokens, expected)
        << "request " << id;
    cached += expected;
    ++id;
  }
  const PrefixCacheCounters& counters = scheduler->state().kv_stats.pools[0];
  EXPECT_EQ(counters.requests, 5);
  EXPECT_EQ(counters.hit_requests, 3);
  EXPECT_EQ(counters.cached_tokens, cached);
  EXPECT_DOUBLE_EQ(counters.token_hit_rate(), static_cast<double>(cached) / (5 * 97));
  EXPECT_DOUBLE_EQ(counters.request_hit_rate(), 0.6);
}

TEST(PrefixCache, StatisticsLeaveOutRequestsBeforeTheWarmUp) {
  SchedulerOptions options;
  options.statistics_from = at_ms(1000);
  auto scheduler = make(small_node(64), options);
  const std::vector<BlockHash> prefix = hashes_of({{1, 4}});
  Time now;
  scheduler->submit(request(1, ModelId(0), 80, 2, now, prefix), now);
  run_until_finished(*scheduler, RequestId(1), now);
  EXPECT_EQ(scheduler->state().kv_stats.pools[0].requests, 0);
  now = at_ms(1000);
  scheduler->submit(request(2, ModelId(0), 80, 2, now, prefix), now);
  run_until_finished(*scheduler, RequestId(2), now);
  EXPECT_EQ(scheduler->state().kv_stats.pools[0].requests, 1);
  EXPECT_EQ(scheduler->state().kv_stats.pools[0].cached_tokens, 64);
}

TEST(PrefixCache, PrefixCachingOffReusesNothing) {
  SchedulerOptions options;
  options.prefix_caching = false;
  auto scheduler = make(small_node(64), options);
  const std::vector<BlockHash> prefix = hashes_of({{1, 6}});
  Time now;
  for (uint64_t id = 1; id <= 2; ++id) {
    scheduler->submit(request(id, ModelId(0), 100, 2, now, prefix), now);
    EXPECT_EQ(run_until_finished(*scheduler, RequestId(id), now).cached_prompt_tokens, 0);
  }
}

TEST(HostTier, AnEvictedPrefixIsKeptInHostMemoryAndALaterHitWaitsForItsCopy) {
  SchedulerOptions options;
  options.host_prefix_cache = true;
  auto scheduler = make(small_node(8), options);
  const std::vector<BlockHash> a = hashes_of({{1, 4}});
  const std::vector<BlockHash> b = hashes_of({{2, 7}});
  Time now;
  scheduler->submit(request(1, ModelId(0), 65, 1, now, a), now);
  run_until_finished(*scheduler, RequestId(1), now);
  // B needs all eight blocks: A's four cached blocks are evicted to host memory.
  scheduler->submit(request(2, ModelId(0), 113, 1, now, b), now);
  run_until_finished(*scheduler, RequestId(2), now);
  EXPECT_EQ(scheduler->state().host.kept_blocks(), 4);
  EXPECT_EQ(scheduler->state().replicas[0].kv.evicted_blocks(), 4);

  scheduler->submit(request(3, ModelId(0), 65, 1, now, a), now);
  EXPECT_TRUE(scheduler->effects().launches.empty())
      << "its prefix is being copied in from host memory: nothing to compute yet";
  const Duration copy =
      kv_swap_time(scheduler->state().node->models[0], scheduler->state().node->hardware, 64);
  EXPECT_EQ(scheduler->next_wakeup(now), now + copy);
  const Time submitted = now;
  now = now + copy;
  scheduler->on_timer(now);
  ASSERT_EQ(scheduler->effects().launches.size(), 1u);
  EXPECT_EQ(scheduler->effects().launches[0].entries[0].prefill_tokens, 1);
  const RequestRecord record = run_until_finished(*scheduler, RequestId(3), now);
  EXPECT_EQ(record.cached_prompt_tokens, 64);
  EXPECT_EQ(*record.ttft(), copy + milliseconds(10)) << "the copy, then one iteration";
  EXPECT_EQ(record.arrival, submitted);
  EXPECT_EQ(scheduler->state().kv_stats.pools[0].host_tokens, 64);
}

TEST(HostTier, WithoutTheHostCacheEvictedPrefixesAreLost) {
  SchedulerOptions options;
  options.host_prefix_cache = false;
  auto scheduler = make(small_node(8), options);
  const std::vector<BlockHash> a = hashes_of({{1, 4}});
  Time now;
  scheduler->submit(request(1, ModelId(0), 65, 1, now, a), now);
  run_until_finished(*scheduler, RequestId(1), now);
  scheduler->submit(request(2, ModelId(0), 113, 1, now, hashes_of({{2, 7}})), now);
  run_until_finished(*scheduler, RequestId(2), now);
  EXPECT_EQ(scheduler->state().host.kept_blocks(), 0);
  scheduler->submit(request(3, ModelId(0), 65, 1, now, a), now);
  EXPECT_EQ(run_until_finished(*scheduler, RequestId(3), now).cached_prompt_tokens, 0);
}

// Two long sequences decode until the pool is full; the younger must yield. With the roofline
// model recomputing ~2.3k tokens costs tens of ms of GPU time; swapping them costs ~12 ms of
// PCIe: the cost rule swaps, and the victim resumes with its KV and output intact.
struct Exhaustion {
  std::unique_ptr<Scheduler> scheduler;
  Time now;
  int prompt = 0;

  explicit Exhaustion(PreemptionPolicy preemption, int64_t host_gib = 1024) {
    NodeSpec node = small_node(300, /*roofline=*/true);
    node.host_memory_bytes = host_gib << 30;
    node.models[0].prefill_chunk_tokens = 4096;
    node.models[0].max_batched_tokens = 8192;
    SchedulerOptions options;
    options.preemption = preemption;
    scheduler = make(node, options);
    prompt = (300 / 2 - 2) * kBlock + 1;  // two fit with a block and a bit to spare each
    scheduler->submit(request(1, ModelId(0), prompt, 400, now), now);
    scheduler->submit(request(2, ModelId(0), prompt, 400, now), now);
  }

  // Runs iterations until request 2 has yielded; returns its sequence.
  const Sequence& until_preempted() {
    const Replica& replica = scheduler->state().replicas[0];
    for (int i = 0; i < 400 && replica.queue.empty(); ++i) {
      scheduler->effects().clear();
      now += milliseconds(20);
      if (scheduler->state().gpus[0].small_busy) {
        scheduler->on_iteration_done(EngineRef::small(GpuId(0)), {}, now);
      } else {
        scheduler->on_timer(now);
      }
    }
    if (replica.queue.size() != 1) {
      ADD_FAILURE() << "someone must have yielded";
      static const Sequence none;
      return none;
    }
    return scheduler->state().sequence(replica.queue.front());
  }
};

TEST(PreemptionByCost, ALongContextIsSwappedWhenRecomputingItCostsMore) {
  Exhaustion run(PreemptionPolicy::kCost);
  const Sequence& victim = run.until_preempted();
  EXPECT_EQ(victim.spec.id, RequestId(2));
  EXPECT_TRUE(victim.swapped);
  EXPECT_TRUE(victim.blocks.empty());
  EXPECT_GT(victim.kv_tokens, run.prompt) << "its KV (prompt and output) waits on the host";
  EXPECT_EQ(victim.prefill_target_tokens, run.prompt) << "nothing to recompute";
  const int32_t generated = victim.generated_tokens;
  const KvStatistics& stats = run.scheduler->state().kv_stats;
  EXPECT_EQ(stats.preemptions_by_model[0][static_cast<int>(PreemptionMode::kSwap)].count, 1);
  EXPECT_EQ(stats.preemptions_by_reason[static_cast<int>(PreemptionReason::kMemory)]
                                       [static_cast<int>(PreemptionMode::kSwap)],
            1);
  EXPECT_GT(run.scheduler->state().host.swapped_bytes(), 0);
  // Request 1 ends (the engine says so); request 2 comes back from host memory and goes on.
  const RequestId ended[] = {RequestId(1)};
  run.scheduler->effects().clear();
  run.now += milliseconds(20);
  run.scheduler->on_iteration_done(EngineRef::small(GpuId(0)), ended, run.now);
  for (int i = 0; i < 10 && run.scheduler->state().replicas[0].running.empty(); ++i) {
    run.now += milliseconds(20);
    run.scheduler->on_timer(run.now);
  }
  ASSERT_EQ(run.scheduler->state().replicas[0].running.size(), 1u);
  const Sequence& back =
      run.scheduler->state().sequence(run.scheduler->state().replicas[0].running[0]);
  EXPECT_EQ(back.spec.id, RequestId(2));
  EXPECT_FALSE(back.swapped);
  EXPECT_EQ(back.generated_tokens, generated);
  EXPECT_EQ(run.scheduler->state().host.swapped_bytes(), 0);
  run.scheduler->check_invariants();
}

TEST(PreemptionByCost, WithoutHostMemoryTheVictimIsRecomputed) {
  Exhaustion run(PreemptionPolicy::kCost, /*host_gib=*/0);
  const Sequence& victim = run.until_preempted();
  EXPECT_FALSE(victim.swapped);
  EXPECT_EQ(victim.kv_tokens, 0);
  EXPECT_EQ(victim.prefill_target_tokens, run.prompt + victim.generated_tokens);
}

TEST(PreemptionByCost, AForcedModeIsUsedWherePossible) {
  Exhaustion run(PreemptionPolicy::kRecompute);
  const Sequence& victim = run.until_preempted();
  EXPECT_FALSE(victim.swapped);
  EXPECT_EQ(victim.prefill_target_tokens, run.prompt + victim.generated_tokens);
  EXPECT_EQ(run.scheduler->state()
                .kv_stats.preemptions_by_model[0][static_cast<int>(PreemptionMode::kRecompute)]
                .count,
            1);
}

TEST(PreemptionByCost, ASharedPromptMakesRecomputingCheaperThanSwapping) {
  // Two requests share a 4,800-token document and differ in their last 17 tokens. When memory
  // runs out, the younger one's document blocks stay on the GPU (the older holds them too), so
  // recomputing it costs a short chunk; swapping would copy all ~4.8k tokens out and back.
  NodeSpec node = small_node(305, /*roofline=*/true);
  node.models[0].prefill_chunk_tokens = 4096;
  node.models[0].max_batched_tokens = 8192;
  auto scheduler = make(node);
  const int prompt = 301 * kBlock + 1;
  scheduler->submit(request(1, ModelId(0), prompt, 60, Time{}, hashes_of({{7, 300}, {1, 1}})),
                    Time{});
  scheduler->submit(request(2, ModelId(0), prompt, 60, Time{}, hashes_of({{7, 300}, {2, 1}})),
                    Time{});
  Time now;
  const Replica& replica = scheduler->state().replicas[0];
  for (int i = 0; i < 200 && replica.running.size() < 2; ++i) {
    scheduler->effects().clear();
    now += milliseconds(20);
    scheduler->on_iteration_done(EngineRef::small(GpuId(0)), {}, now);
  }
  ASSERT_EQ(replica.running.size(), 2u) << "the second joins once the document is published";
  for (int i = 0; i < 200 && replica.queue.empty(); ++i) {
    scheduler->effects().clear();
    now += milliseconds(20);
    scheduler->on_iteration_done(EngineRef::small(GpuId(0)), {}, now);
  }
  ASSERT_EQ(replica.queue.size(), 1u);
  const Sequence& victim = scheduler->state().sequence(replica.queue.front());
  EXPECT_EQ(victim.spec.id, RequestId(2));
  EXPECT_FALSE(victim.swapped);
  EXPECT_EQ(scheduler->state()
                .kv_stats.preemptions_by_model[0][static_cast<int>(PreemptionMode::kRecompute)]
                .count,
            1);
}

// Exclusive mode, a policy that wants the gang at once and evicts stragglers at once: resident
// small sequences are paused in place (their KV kept, the large model has its own pool), the
// gang starts, and they resume afterwards with nothing recomputed.
class DrainAtOncePolicy final : public GangPolicy {
 public:
  std::string_view name() const override { return "drain-at-once"; }
  ExecutionMode mode() const override { return ExecutionMode::kExclusive; }
  bool want_gang(const SchedulerView&, Time) override { return true; }
  bool keep_gang(const SchedulerView&, Time) override { return true; }
  bool admit_small(const SchedulerView& state, const Replica&, const Sequence&, Time) override {
    return !state.has_large_work();
  }
  bool force_drain(const SchedulerView&, Time) override { return true; }
};

NodeSpec mixed_node() {
  NodeSpec node = default_node_spec();
  for (ModelSpec& model : node.models) {
    model.cost.kind = CostModelKind::kConstant;
    model.cost.constant_iteration_s = 0.010;
  }
  return node;
}

TEST(PreemptionByCost, AnExclusiveGangPausesResidentSmallSequencesInPlace) {
  const NodeSpec node = mixed_node();
  Scheduler scheduler(node, SchedulerOptions{}, std::make_unique<DrainAtOncePolicy>(), nullptr);
  Effects& effects = scheduler.effects();
  for (uint64_t i = 0; i < 8; ++i) {
    scheduler.submit(request(i, ModelId(0), 100, 50, Time{}), Time{});
  }
  ASSERT_EQ(effects.launches.size(), 8u) << "one per GPU";
  effects.clear();
  scheduler.submit(request(100, ModelId(1), 100, 3, at_ms(1)), at_ms(1));
  for (int g = 0; g < 8; ++g) {
    scheduler.on_iteration_done(EngineRef::small(GpuId(static_cast<uint16_t>(g))), {}, at_ms(10));
  }
  ASSERT_EQ(scheduler.state().gang.phase, GangPhase::kActive);
  EXPECT_EQ(scheduler.state().small_resident(), 0);
  int64_t paused = 0;
  for (const Replica& replica : scheduler.state().replicas) {
    paused += static_cast<int64_t>(replica.paused.size());
    for (SequenceHandle h : replica.paused) {
      EXPECT_GT(scheduler.state().sequence(h).kv_blocks, 0) << "KV stays in place";
    }
  }
  EXPECT_EQ(paused, 8);
  const KvStatistics& stats = scheduler.state().kv_stats;
  EXPECT_EQ(stats.preemptions_by_reason[static_cast<int>(PreemptionReason::kGang)]
                                       [static_cast<int>(PreemptionMode::kPause)],
            8);
  // The large request runs its three tokens; then the small ones resume where they were.
  Time now = at_ms(10);
  for (int i = 0; i < 3; ++i) {
    effects.clear();
    now += milliseconds(10);
    scheduler.on_iteration_done(EngineRef::large(), {}, now);
  }
  EXPECT_EQ(scheduler.state().gang.phase, GangPhase::kOff);
  EXPECT_EQ(scheduler.state().small_resident(), 8);
  ASSERT_EQ(effects.launches.size(), 8u);
  for (const IterationLaunch& launch : effects.launches) {
    EXPECT_EQ(launch.entries[0].prefill_tokens, 0) << "a decode: nothing was recomputed";
    EXPECT_EQ(launch.entries[0].context_tokens, 100) << "the prompt's KV, kept in place";
  }
}

TEST(CacheAwareBatching, TheLargeModelDefersARequestWhosePrefixIsBeingComputed) {
  for (const bool cache_aware : {false, true}) {
    NodeSpec node = mixed_node();
    node.models[1].max_batched_tokens = 2048;
    SchedulerOptions options;
    options.lm_cache_aware_batching = cache_aware;
    auto scheduler = make(node, options, "lm-first");
    // Two requests share a 4,096-token document, then differ. They queue together behind a
    // small request that holds GPU 0 for one iteration.
    const std::vector<BlockHash> first = hashes_of({{7, 256}, {1, 8}});
    const std::vector<BlockHash> second = hashes_of({{7, 256}, {2, 8}});
    scheduler->submit(request(9, ModelId(0), 10, 1, Time{}), Time{});
    scheduler->submit(request(1, ModelId(1), 4224, 2, Time{}, first), Time{});
    scheduler->submit(request(2, ModelId(1), 4224, 2, Time{}, second), Time{});
    ASSERT_FALSE(scheduler->state().large->busy);
    Time now = at_ms(10);
    scheduler->on_iteration_done(EngineRef::small(GpuId(0)), {}, now);
    std::vector<RequestRecord> records;
    for (int i = 0; i < 100 && records.size() < 2; ++i) {
      for (const RequestRecord& record : scheduler->effects().finished) {
        if (record.model == ModelId(1)) records.push_back(record);
      }
      scheduler->effects().clear();
      now += milliseconds(10);
      if (scheduler->state().large->busy) scheduler->on_iteration_done(EngineRef::large(), {}, now);
    }
    ASSERT_EQ(records.size(), 2u);
    const RequestRecord& later = records[0].id == RequestId(2) ? records[0] : records[1];
    if (cache_aware) {
      EXPECT_EQ(later.cached_prompt_tokens, 4096) << "it waited for the document and hit it";
    } else {
      EXPECT_EQ(later.cached_prompt_tokens, 0) << "both computed the document side by side";
    }
  }
}

TEST(DynamicSplit, TheLargePoolGrowsWhenItsAdmissionsWaitForMemory) {
  NodeSpec node = mixed_node();
  node.models[1].max_context_tokens = 1 << 20;
  node.models[1].max_batched_tokens = 1 << 16;
  node.models[1].prefill_chunk_tokens = 1 << 16;
  SchedulerOptions options;
  options.kv_split = KvSplit::kDynamic;
  options.large_kv_fraction = 0.2;
  options.large_kv_fraction_min = 0.2;
  options.large_kv_fraction_max = 0.8;
  options.kv_rebalance_interval = Duration(0);
  auto scheduler = make(node, options, "lm-first");
  const int64_t start_blocks = scheduler->state().large->kv.capacity_blocks();
  // Ten 40k-token prompts: twice what the large pool holds at 0.2.
  for (uint64_t i = 0; i < 10; ++i) {
    scheduler->submit(request(i, ModelId(1), 40000, 100, Time{}), Time{});
  }
  Time now;
  for (int i = 0; i < 50; ++i) {
    scheduler->effects().clear();
    now += milliseconds(10);
    if (scheduler->state().large->busy) {
      scheduler->on_iteration_done(EngineRef::large(), {}, now);
    } else {
      scheduler->on_timer(now);
    }
  }
  EXPECT_GT(scheduler->state().large_kv_fraction, 0.2);
  EXPECT_GT(scheduler->state().large->kv.capacity_blocks(), start_blocks);
  EXPECT_LE(scheduler->state().large_kv_fraction, 0.8 + 1e-9);
  EXPECT_GT(scheduler->state().kv_stats.split_moves_to_large, 0);
  EXPECT_LT(scheduler->state().replicas[0].kv.capacity_blocks(),
            scheduler->state().replicas[0].kv.max_capacity_blocks());
  scheduler->check_invariants();
}

}  // namespace
}  // namespace gangway
