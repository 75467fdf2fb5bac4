// The scheduler's host KV tier end to end: an evicted prefix kept in host memory and copied back
// for a later hit, and lost without the tier. Every event runs the invariant checks (test
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

}  // namespace
}  // namespace gangway
