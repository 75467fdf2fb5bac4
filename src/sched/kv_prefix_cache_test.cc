// The scheduler's prefix cache end to end on small hand-made cases with known answers: prefix
// hits and their statistics, and cache-aware batch formation for the large model (a request
// whose prefix is being computed waits for it). Every event runs the invariant checks (test
// builds), including the block accounting.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/time_for_tests.h"
#include "sched/kv_scheduler_harness_for_tests.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

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

// In promise mode admission counts the prefill work that tighter classes keep bringing (they
// will go ahead of a newcomer that waits). A stream of interactive requests that hit a cached
// 4,096-token document brings 16 tokens each, not 4,112: a standard request arriving after
// twenty of them is predicted to wait for next to nothing, where counting their whole prompts
// (some 80,000 tokens a second, most of this GPU's prefill rate) would predict it seconds.
TEST(PrefixCache, PromiseModeCountsTheWorkTighterClassesBringNetOfTheirCacheHits) {
  SchedulerOptions options;
  options.admission.keep_promises = true;
  auto scheduler = make(small_node(4096), options);
  const std::vector<BlockHash> document = hashes_of({{5, 256}, {9, 1}});
  Time now;
  ASSERT_TRUE(scheduler->submit(request(1, ModelId(0), 4112, 1, now, document), now).accepted);
  run_until_finished(*scheduler, RequestId(1), now);
  for (uint64_t id = 2; id < 22; ++id) {
    RequestSpec spec = request(id, ModelId(0), 4112, 1, now, document);
    spec.slo_class = SloClassId(0);  // interactive
    ASSERT_TRUE(scheduler->submit(spec, now).accepted);
    now += milliseconds(10);
    scheduler->on_timer(now);
  }
  RequestSpec standard = request(30, ModelId(0), 16, 1, now);
  standard.slo_class = SloClassId(1);
  const SubmitResult result = scheduler->submit(standard, now);
  ASSERT_TRUE(result.accepted);
  const Sequence& seq = scheduler->state().sequences[result.handle];
  ASSERT_TRUE(seq.predicted_ttft.has_value());
  EXPECT_LT(*seq.predicted_ttft, milliseconds(500));
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

}  // namespace
}  // namespace gangway
