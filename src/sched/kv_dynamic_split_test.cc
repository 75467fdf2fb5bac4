// The dynamic split of GPU memory between the small models' and the large model's KV pools: the
// large pool grows when its admissions wait for memory. Every event runs the invariant checks
// (test builds), including the block accounting.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/time_for_tests.h"
#include "sched/kv_scheduler_harness_for_tests.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

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
