// Preemption when the KV pool runs out, chosen by cost: swap to host memory, recompute, or pause
// in place (an exclusive gang taking the GPUs), on small hand-made cases with known answers.
// Every event runs the invariant checks (test builds), including the block accounting.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/time_for_tests.h"
#include "sched/kv_scheduler_harness_for_tests.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

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

}  // namespace
}  // namespace gangway
