// The overload ladder's `defer_batch` rung must never leave GPUs idle with work queued: a batch
// request at a queue's head waits while other classes are queued, and where nothing else runs the
// decision pass runs again with deferral lifted. The ladder asks for wakeups of its own (it steps
// down without arrivals once its samples are stale); those must not count as "something else will
// happen", or an idle node waits a second or more for them.

#include <gtest/gtest.h>

#include <algorithm>

#include "core/time_for_tests.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

RequestSpec request(uint64_t id, uint8_t slo_class, int max_tokens, Time arrival) {
  RequestSpec spec;
  spec.id = RequestId(id);
  spec.model = ModelId(0);
  spec.slo_class = SloClassId(slo_class);
  spec.arrival = arrival;
  spec.prompt_tokens = 10;
  spec.max_tokens = max_tokens;
  return spec;
}

bool launched(const Effects& effects, RequestId id) {
  for (const IterationLaunch& launch : effects.launches) {
    if (std::any_of(launch.entries.begin(), launch.entries.end(),
                    [&](const BatchEntry& entry) { return entry.id == id; })) {
      return true;
    }
  }
  return false;
}

TEST(Deferral, AnIdleGpuDoesNotWaitForTheLadderToStepDown) {
  // One GPU, 10 ms per iteration; interactive (class 0), standard, batch (class 2).
  NodeSpec node = default_node_spec();
  node.models.pop_back();  // no large model
  node.models[0].gpus = {GpuId(0)};
  node.models[0].cost.kind = CostModelKind::kConstant;
  node.models[0].cost.constant_iteration_s = 0.010;
  SchedulerOptions options;
  options.admission.enabled = true;
  options.admission.queue_order = QueueOrder::kSlack;
  // defer_batch at any wait, entered at once; batch requests sort ahead of everything after 1 ms.
  options.admission.ladder.enter = {0, 0.001, 100, 200, 300, 400};
  options.admission.ladder.dwell = Duration(0);
  options.admission.no_target_deadline = milliseconds(1);
  PolicySpec policy;
  policy.name = "fcfs";
  Scheduler scheduler(node, options, make_policy(policy), nullptr);
  Effects& effects = scheduler.effects();

  // A runs three iterations (0-30 ms). B (batch) and I (interactive) arrive while it does: B's
  // pressure sample puts the ladder at defer_batch, and B heads the queue with I behind it.
  ASSERT_TRUE(scheduler.submit(request(1, 0, 3, at_ms(0)), at_ms(0)).accepted);
  ASSERT_TRUE(scheduler.submit(request(2, 2, 5, at_ms(1)), at_ms(1)).accepted);
  ASSERT_EQ(scheduler.state().overload.level, OverloadLevel::kDeferBatch);
  ASSERT_TRUE(scheduler.submit(request(3, 0, 5, at_ms(2)), at_ms(2)).accepted);
  ASSERT_EQ(scheduler.state().overload.level, OverloadLevel::kDeferBatch);
  // The ladder wants a wakeup: it may step down once the samples are a second old.
  EXPECT_LT(scheduler.next_wakeup(at_ms(2)), Time::max());
  effects.clear();

  // While A runs, B waits (deferred) and I behind it.
  for (int64_t t : {10, 20}) {
    scheduler.on_iteration_done(EngineRef::small(GpuId(0)), {}, at_ms(t));
    EXPECT_FALSE(launched(effects, RequestId(2))) << t;
    effects.clear();
  }
  // A ends at 30 ms and the GPU would be idle: B and I start at once, not after the ladder's
  // wakeup a second later.
  scheduler.on_iteration_done(EngineRef::small(GpuId(0)), {}, at_ms(30));
  EXPECT_TRUE(launched(effects, RequestId(2)));
  EXPECT_TRUE(launched(effects, RequestId(3)));
  EXPECT_EQ(scheduler.state().overload.level, OverloadLevel::kDeferBatch);
}

}  // namespace
}  // namespace gangway
