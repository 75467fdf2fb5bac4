#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/time_for_tests.h"
#include "sched/policy_registry.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

// A node with a constant cost model (10 ms per iteration) so that expected times are exact.
NodeSpec constant_node(int gpus_with_small = 8, bool with_large = true) {
  NodeSpec node = default_node_spec();
  node.models[0].gpus.clear();
  for (int g = 0; g < gpus_with_small; ++g) node.models[0].gpus.emplace_back(g);
  for (ModelSpec& model : node.models) {
    model.cost.kind = CostModelKind::kConstant;
    model.cost.constant_iteration_s = 0.010;
  }
  if (!with_large) node.models.pop_back();
  return node;
}

RequestSpec request(uint64_t id, ModelId model, int prompt, int max_tokens, Time arrival) {
  RequestSpec spec;
  spec.id = RequestId(id);
  spec.model = model;
  spec.slo_class = SloClassId(0);
  spec.arrival = arrival;
  spec.prompt_tokens = prompt;
  spec.max_tokens = max_tokens;
  return spec;
}

std::unique_ptr<Scheduler> make_scheduler(const NodeSpec& node, const std::string& policy) {
  PolicySpec spec;
  spec.name = policy;
  return std::make_unique<Scheduler>(node, SchedulerOptions{}, make_policy(spec), nullptr);
}

TEST(Scheduler, SmallRequestRunsPrefillThenDecodesToMaxTokens) {
  const NodeSpec node = constant_node(1, false);
  auto scheduler = make_scheduler(node, "fcfs");
  ASSERT_TRUE(scheduler->submit(request(7, ModelId(0), 100, 3, at_ms(0)), at_ms(0)).accepted);
  Effects& effects = scheduler->effects();
  ASSERT_EQ(effects.launches.size(), 1u);
  EXPECT_EQ(effects.launches[0].entries.size(), 1u);
  EXPECT_EQ(effects.launches[0].entries[0].prefill_tokens, 100);
  EXPECT_TRUE(effects.launches[0].entries[0].emits_token);
  EXPECT_EQ(effects.launches[0].predicted, milliseconds(10));
  effects.clear();

  // Three tokens: the prefill iteration emits the first, two decode steps the rest.
  for (int step = 1; step <= 3; ++step) {
    scheduler->on_iteration_done(EngineRef::small(GpuId(0)), {}, at_ms(10 * step));
    if (step < 3) {
      ASSERT_EQ(effects.launches.size(), 1u) << "step " << step;
      EXPECT_EQ(effects.launches[0].entries[0].prefill_tokens, 0);
      EXPECT_EQ(effects.launches[0].entries[0].context_tokens, 100 + step - 1);
    }
    if (step < 3) effects.clear();
  }
  ASSERT_EQ(effects.finished.size(), 1u);
  const RequestRecord& record = effects.finished[0];
  EXPECT_EQ(record.outcome, Outcome::kCompleted);
  EXPECT_EQ(record.output_tokens, 3);
  EXPECT_EQ(*record.ttft(), milliseconds(10));
  EXPECT_EQ(record.e2e(), milliseconds(30));
  EXPECT_EQ(*record.tpot(), milliseconds(10));
  EXPECT_TRUE(record.slo_met);
  EXPECT_TRUE(record.ttft_met);
  EXPECT_EQ(scheduler->live_requests(), 0);
}

TEST(Scheduler, RecordsJudgeTheFirstTokenApartFromTheWholeSlo) {
  NodeSpec node = constant_node(1, false);
  node.slo_classes[0].ttft_target = milliseconds(200);
  node.slo_classes[0].tpot_target = milliseconds(5);  // iterations take 10 ms: TPOT misses
  // A class whose first tokens are late (admission takes them anyway, as best effort).
  node.slo_classes[1].ttft_target = milliseconds(5);
  node.slo_classes[1].on_predicted_miss = MissAction::kBestEffort;
  auto scheduler = make_scheduler(node, "fcfs");
  RequestSpec late_decode = request(1, ModelId(0), 100, 3, at_ms(0));
  RequestSpec late_first_token = request(2, ModelId(0), 100, 3, at_ms(0));
  late_first_token.slo_class = node.slo_classes[1].id;
  ASSERT_TRUE(scheduler->submit(late_decode, at_ms(0)).accepted);
  ASSERT_TRUE(scheduler->submit(late_first_token, at_ms(0)).accepted);
  Effects& effects = scheduler->effects();
  for (int step = 1; effects.finished.size() < 2 && step < 100; ++step) {
    effects.launches.clear();
    scheduler->on_iteration_done(EngineRef::small(GpuId(0)), {}, at_ms(10 * step));
  }
  ASSERT_EQ(effects.finished.size(), 2u);
  for (const RequestRecord& record : effects.finished) {
    EXPECT_EQ(record.outcome, Outcome::kCompleted);
    EXPECT_FALSE(record.slo_met) << record.id.value();
    EXPECT_EQ(record.ttft_met, record.id == RequestId(1)) << record.id.value();
  }
}

TEST(Scheduler, ChunkedPrefillTakesOneIterationPerChunk) {
  NodeSpec node = constant_node(1, false);
  node.models[0].prefill_chunk_tokens = 512;
  auto scheduler = make_scheduler(node, "fcfs");
  scheduler->submit(request(1, ModelId(0), 1200, 1, at_ms(0)), at_ms(0));
  Effects& effects = scheduler->effects();
  std::vector<int> chunks;
  for (int step = 1; effects.finished.empty(); ++step) {
    ASSERT_EQ(effects.launches.size(), 1u);
    chunks.push_back(effects.launches[0].entries[0].prefill_tokens);
    effects.clear();
    scheduler->on_iteration_done(EngineRef::small(GpuId(0)), {}, at_ms(10 * step));
  }
  EXPECT_EQ(chunks, (std::vector<int>{512, 512, 176}));
  EXPECT_EQ(*effects.finished[0].ttft(), milliseconds(30));
}

TEST(Scheduler, DecodesGoFirstAndPrefillFillsTheTokenBudget) {
  NodeSpec node = constant_node(1, false);
  node.models[0].max_batched_tokens = 600;
  node.models[0].prefill_chunk_tokens = 512;
  auto scheduler = make_scheduler(node, "fcfs");
  Effects& effects = scheduler->effects();
  scheduler->submit(request(1, ModelId(0), 64, 100, at_ms(0)), at_ms(0));
  effects.clear();
  scheduler->submit(request(2, ModelId(0), 2000, 100, at_ms(1)), at_ms(1));
  scheduler->submit(request(3, ModelId(0), 2000, 100, at_ms(2)), at_ms(2));
  EXPECT_TRUE(effects.launches.empty()) << "GPU busy: nothing launches before the boundary";
  scheduler->on_iteration_done(EngineRef::small(GpuId(0)), {}, at_ms(10));
  ASSERT_EQ(effects.launches.size(), 1u);
  const auto entries = effects.launches[0].entries;
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].id, RequestId(1));
  EXPECT_EQ(entries[0].prefill_tokens, 0);  // decode first
  EXPECT_EQ(entries[1].prefill_tokens, 512);
  EXPECT_EQ(entries[2].prefill_tokens, 600 - 1 - 512);  // what is left of the budget
}

TEST(Scheduler, EngineReportedEndFinishesBeforeMaxTokens) {
  auto scheduler = make_scheduler(constant_node(1, false), "fcfs");
  Effects& effects = scheduler->effects();
  scheduler->submit(request(5, ModelId(0), 10, 100, at_ms(0)), at_ms(0));
  effects.clear();
  const RequestId ended[] = {RequestId(5)};
  scheduler->on_iteration_done(EngineRef::small(GpuId(0)), ended, at_ms(10));
  ASSERT_EQ(effects.finished.size(), 1u);
  EXPECT_EQ(effects.finished[0].output_tokens, 1);
  EXPECT_TRUE(effects.launches.empty());
}

// Engines name an iteration's ended sequences in batch order, and the completion matches them in
// one pass; ends named in another order, or mixed with ids not in the batch, end the same
// sequences, in batch order.
TEST(Scheduler, EngineReportedEndsInAnyOrderFinishTheNamedSequences) {
  for (const bool reversed : {false, true}) {
    auto scheduler = make_scheduler(constant_node(1, false), "fcfs");
    Effects& effects = scheduler->effects();
    for (uint64_t id = 1; id <= 4; ++id) {
      scheduler->submit(request(id, ModelId(0), 10, 100, at_ms(0)), at_ms(0));
    }
    // The first iteration holds the first arrival's prefill; the next one all four.
    effects.clear();
    scheduler->on_iteration_done(EngineRef::small(GpuId(0)), {}, at_ms(10));
    ASSERT_EQ(effects.launches.size(), 1u);
    ASSERT_EQ(effects.launches[0].entries.size(), 4u);
    effects.clear();
    std::vector<RequestId> ended = {RequestId(2), RequestId(4)};
    if (reversed) ended = {RequestId(4), RequestId(99), RequestId(2)};
    scheduler->on_iteration_done(EngineRef::small(GpuId(0)), ended, at_ms(20));
    ASSERT_EQ(effects.finished.size(), 2u) << "reversed: " << reversed;
    EXPECT_EQ(effects.finished[0].id, RequestId(2));
    EXPECT_EQ(effects.finished[1].id, RequestId(4));
    EXPECT_EQ(effects.finished[0].output_tokens, 1);
    // The other two decode on.
    ASSERT_EQ(effects.launches.size(), 1u);
    EXPECT_EQ(effects.launches[0].entries.size(), 2u);
  }
}

TEST(Scheduler, RejectsRequestsThatCanNeverRun) {
  auto scheduler = make_scheduler(constant_node(1, false), "fcfs");
  Effects& effects = scheduler->effects();
  EXPECT_FALSE(scheduler->submit(request(1, ModelId(0), 0, 10, at_ms(0)), at_ms(0)).accepted);
  EXPECT_FALSE(scheduler->submit(request(2, ModelId(0), 10, 0, at_ms(0)), at_ms(0)).accepted);
  EXPECT_FALSE(scheduler->submit(request(3, ModelId(9), 10, 10, at_ms(0)), at_ms(0)).accepted);
  EXPECT_FALSE(scheduler->submit(request(4, ModelId(0), 32000, 1000, at_ms(0)), at_ms(0)).accepted);
  ASSERT_EQ(effects.finished.size(), 4u);
  for (const RequestRecord& record : effects.finished) {
    EXPECT_EQ(record.outcome, Outcome::kRejected);
    EXPECT_EQ(record.reason, Reason::kBadRequest);
    EXPECT_FALSE(retry_elsewhere(record.reason));
  }
  EXPECT_EQ(scheduler->live_requests(), 0);
}

TEST(Scheduler, CancelQueuedAndInFlightRequestsEndOnce) {
  auto scheduler = make_scheduler(constant_node(1, false), "fcfs");
  Effects& effects = scheduler->effects();
  scheduler->submit(request(1, ModelId(0), 10, 50, at_ms(0)), at_ms(0));
  effects.clear();
  scheduler->cancel(RequestId(1), at_ms(5));  // in flight: honoured at the boundary
  EXPECT_TRUE(effects.finished.empty());
  scheduler->on_iteration_done(EngineRef::small(GpuId(0)), {}, at_ms(10));
  ASSERT_EQ(effects.finished.size(), 1u);
  EXPECT_EQ(effects.finished[0].outcome, Outcome::kCancelled);
  effects.clear();
  scheduler->cancel(RequestId(1), at_ms(11));  // already ended: ignored
  EXPECT_TRUE(effects.finished.empty());
  EXPECT_EQ(scheduler->live_requests(), 0);
}

TEST(Scheduler, LargeRequestWaitsForEveryGpuToReachItsBoundary) {
  // time-slice with the whole cycle given to the large model: a pending lease stops new small
  // iterations and starts when the last GPU finishes its iteration.
  NodeSpec node = constant_node(8, true);
  PolicySpec spec;
  spec.name = "time-slice";
  spec.slice_period = milliseconds(1000);
  spec.slice_large_share = 0.99;
  Scheduler scheduler(node, SchedulerOptions{}, make_policy(spec), nullptr);
  Effects& effects = scheduler.effects();
  // Eight small requests, one per GPU, each busy until t = 10 ms.
  for (int i = 0; i < 8; ++i) {
    scheduler.submit(request(i, ModelId(0), 10, 100, at_ms(0)), at_ms(0));
  }
  EXPECT_EQ(effects.launches.size(), 8u);
  effects.clear();
  scheduler.submit(request(100, ModelId(1), 10, 5, at_ms(1)), at_ms(1));
  EXPECT_EQ(scheduler.state().gang.phase, GangPhase::kPending);
  EXPECT_TRUE(effects.launches.empty());
  for (int g = 0; g < 7; ++g) {
    scheduler.on_iteration_done(EngineRef::small(GpuId(g)), {}, at_ms(10));
    EXPECT_TRUE(effects.launches.empty()) << "GPU " << g << " must wait at the barrier";
  }
  std::vector<GpuActivity> activities(8);
  scheduler.gpu_activities(activities);
  EXPECT_EQ(activities[0], GpuActivity::kGangBarrier);
  EXPECT_EQ(activities[7], GpuActivity::kRunningSmall);
  scheduler.on_iteration_done(EngineRef::small(GpuId(7)), {}, at_ms(10));
  ASSERT_EQ(effects.launches.size(), 1u);
  EXPECT_TRUE(effects.launches[0].engine.gang);
  EXPECT_EQ(scheduler.state().gang.phase, GangPhase::kActive);
  // The small sequences stay resident (paused in place) through the lease.
  EXPECT_EQ(scheduler.state().small_resident(), 8);
}

TEST(Scheduler, FcfsDrainsSmallWorkBeforeTheGangAndBlocksLaterSmallRequests) {
  auto scheduler = make_scheduler(constant_node(8, true), "fcfs");
  Effects& effects = scheduler->effects();
  scheduler->submit(request(1, ModelId(0), 10, 3, at_ms(0)), at_ms(0));
  scheduler->submit(request(2, ModelId(1), 10, 2, at_ms(1)), at_ms(1));
  scheduler->submit(request(3, ModelId(0), 10, 3, at_ms(2)), at_ms(2));
  ASSERT_EQ(effects.launches.size(), 1u) << "request 3 is behind the large request";
  effects.clear();
  // Request 1 runs to its end (3 tokens) before the gang may start.
  scheduler->on_iteration_done(EngineRef::small(GpuId(0)), {}, at_ms(10));
  scheduler->on_iteration_done(EngineRef::small(GpuId(0)), {}, at_ms(20));
  EXPECT_EQ(scheduler->state().gang.phase, GangPhase::kPending);
  scheduler->on_iteration_done(EngineRef::small(GpuId(0)), {}, at_ms(30));
  EXPECT_EQ(scheduler->state().gang.phase, GangPhase::kActive);
  ASSERT_FALSE(effects.launches.empty());
  EXPECT_TRUE(effects.launches.back().engine.gang);
}

TEST(Scheduler, KvShortagePreemptsTheYoungestSequence) {
  NodeSpec node = constant_node(1, false);
  node.models[0].max_context_tokens = 1 << 30;
  node.models[0].max_batched_tokens = 1 << 30;
  node.models[0].prefill_chunk_tokens = 1 << 30;
  SchedulerOptions options;
  options.kv_admission_watermark = 0.0;
  Scheduler scheduler(node, options, make_policy(PolicySpec{}), nullptr);
  const int64_t capacity = scheduler.state().replicas[0].kv.capacity_blocks();
  const int block = node.kv_block_tokens;
  // Two prompts that leave one block free between them: the first decodes that take a fresh
  // block exhaust the pool and the next one must preempt.
  const int prompt = static_cast<int>((capacity / 2 - 1) * block);
  Effects& effects = scheduler.effects();
  scheduler.submit(request(1, ModelId(0), prompt, 1000, at_ms(0)), at_ms(0));
  scheduler.submit(request(2, ModelId(0), prompt, 1000, at_ms(1)), at_ms(1));
  const Replica& replica = scheduler.state().replicas[0];
  int step = 1;
  for (; step < 60 && replica.running.size() < 2; ++step) {
    scheduler.on_iteration_done(EngineRef::small(GpuId(0)), {}, at_ms(10 * step));
  }
  ASSERT_EQ(replica.running.size(), 2u) << "both prompts must become resident";
  for (; step < 200 && replica.running.size() == 2; ++step) {
    scheduler.on_iteration_done(EngineRef::small(GpuId(0)), {}, at_ms(10 * step));
  }
  ASSERT_EQ(replica.running.size(), 1u) << "the pool ran out and someone must have yielded";
  EXPECT_EQ(scheduler.state().sequence(replica.running[0]).spec.id, RequestId(1));
  // The victim went back to the queue with its KV dropped, to be recomputed with its output.
  ASSERT_EQ(replica.queue.size(), 1u);
  const Sequence& victim = scheduler.state().sequence(replica.queue.front());
  EXPECT_EQ(victim.spec.id, RequestId(2));
  EXPECT_EQ(victim.preemptions, 1);
  EXPECT_EQ(victim.kv_blocks, 0);
  EXPECT_EQ(victim.prefill_target_tokens, prompt + victim.generated_tokens);
  EXPECT_TRUE(effects.finished.empty());
  scheduler.check_invariants();
}

}  // namespace
}  // namespace gangway
