// RequestLevelCore: routing by capacity, lease and exclusive tier switches, cancellation, engine
// failures, deadlines, and exactly one terminal record per request under random events.
#include "sched/request_level/request_level_core.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/time_for_tests.h"
#include "sched/request_level/request_level_harness_for_tests.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

// A small deterministic generator (the sched layer's tests do not reach the workload layer's).
struct TestRandom {
  explicit TestRandom(uint64_t seed) : state(seed * 0x9E3779B97F4A7C15ULL + 1) {}
  // Uniform on [low, high].
  int64_t uniform_int(int64_t low, int64_t high) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return low + static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(high - low + 1));
  }
  uint64_t state;
};

// The default node: llama-3-8b (model 0) on 8 GPUs, llama-3-70b (model 1) at TP=8.
// Engines 0-7 are the small replicas, engine 8 the large model's.
struct Harness {
  explicit Harness(bool lease, bool pausable = true, int32_t max_num_seqs = 4) {
    node = default_node_spec();
    core = std::make_unique<RequestLevelCore>(
        node, small_replicas_and_large_engine(8, 100000, max_num_seqs, pausable),
        arrival_order_tier_options(lease));
    core->start(Time::zero());
    take();
  }

  RequestSpec spec(uint64_t id, int model, Time now, int32_t prompt = 100, int32_t max = 50) {
    RequestSpec s;
    s.id = RequestId(id);
    s.model = ModelId(static_cast<uint16_t>(model));
    s.slo_class = SloClassId(0);
    s.arrival = now;
    s.prompt_tokens = prompt;
    s.max_tokens = max;
    return s;
  }
  bool submit(uint64_t id, int model, Time now) { return core->submit(spec(id, model, now), now); }

  // Moves the effects out, counting the terminal records per request.
  RequestLevelEffects take() {
    RequestLevelEffects out = core->effects();
    for (const RequestRecord& record : out.finished) ++ended[record.id.value()];
    core->effects().clear();
    return out;
  }
  // Answers every control call of `effects` at `now`.
  RequestLevelEffects answer(const RequestLevelEffects& effects, Time now) {
    answer_controls(*core, effects.controls, now);
    return take();
  }

  NodeSpec node;
  std::unique_ptr<RequestLevelCore> core;
  std::map<uint64_t, int> ended;
};

TEST(RequestLevelCoreTest, LeaseModeStartsWithTheLargeEnginePaused) {
  Harness h(/*lease=*/true);
  const RequestLevelCore& core = *h.core;
  EXPECT_EQ(core.engines()[8].pause, EnginePause::kPausing);
  for (int e = 0; e < 8; ++e) EXPECT_EQ(core.engines()[e].pause, EnginePause::kRunning);
  EXPECT_EQ(core.holder(), EngineTier::kSmall);
}

TEST(RequestLevelCoreTest, SmallRequestsGoToTheLeastLoadedReplicaWithinItsCapacity) {
  Harness h(/*lease=*/false, /*pausable=*/false, /*max_num_seqs=*/1);
  for (uint64_t id = 1; id <= 9; ++id) h.submit(id, 0, at_ms(1));
  const RequestLevelEffects effects = h.take();
  ASSERT_EQ(effects.dispatches.size(), 8u);  // one per replica (max_num_seqs 1); one waits
  std::set<EngineIndex> used;
  for (const RequestDispatch& d : effects.dispatches) used.insert(d.engine);
  EXPECT_EQ(used.size(), 8u);
  EXPECT_EQ(h.core->queued(ModelId(0)), 1);
  // An end frees its engine for the queued request.
  const EngineIndex freed = *h.core->engine_of(RequestId(3));
  h.core->on_end(RequestId(3), Outcome::kCompleted, Reason::kNone, 7, at_ms(5));
  const RequestLevelEffects after = h.take();
  ASSERT_EQ(after.finished.size(), 1u);
  EXPECT_EQ(after.finished[0].outcome, Outcome::kCompleted);
  EXPECT_EQ(after.finished[0].output_tokens, 7);
  ASSERT_EQ(after.dispatches.size(), 1u);
  EXPECT_EQ(after.dispatches[0].id, RequestId(9));
  EXPECT_EQ(after.dispatches[0].engine, freed);
}

TEST(RequestLevelCoreTest, KvCapacityLimitsWhatOneEngineHolds) {
  NodeSpec node = default_node_spec();
  std::vector<EngineDescriptor> engines = {{ModelId(0), false, {GpuId(0)}, 1000, 256, false}};
  RequestLevelOptions options;
  options.lease = false;
  RequestLevelCore core(node, engines, options);
  core.start(Time::zero());
  RequestSpec spec;
  spec.model = ModelId(0);
  spec.prompt_tokens = 300;
  spec.max_tokens = 100;  // 400 tokens each: two fit in 1000, the third waits
  for (uint64_t id = 1; id <= 3; ++id) {
    spec.id = RequestId(id);
    core.submit(spec, at_ms(1));
  }
  EXPECT_EQ(core.effects().dispatches.size(), 2u);
  EXPECT_EQ(core.queued(ModelId(0)), 1);
}

TEST(RequestLevelCoreTest, LeaseSwitchPausesTheSmallTierBeforeResumingTheLargeOne) {
  Harness h(/*lease=*/true);
  h.core->on_engine_paused(8, at_ms(1));
  h.take();
  h.submit(1, 0, at_ms(2));  // a small request runs
  EXPECT_EQ(h.take().dispatches.size(), 1u);
  h.submit(2, 1, at_ms(3));  // a large one waits for the small tier's hold (300 ms)
  RequestLevelEffects effects = h.take();
  EXPECT_TRUE(effects.dispatches.empty());
  EXPECT_TRUE(effects.controls.empty());
  EXPECT_EQ(h.core->next_wakeup(at_ms(3)), at_ms(300));
  h.core->on_timer(at_ms(300));
  effects = h.take();
  ASSERT_EQ(effects.controls.size(), 8u);  // every small engine pauses
  for (const EngineControl& c : effects.controls) {
    EXPECT_EQ(c.kind, EngineControl::Kind::kPause);
    EXPECT_LT(c.engine, 8);
  }
  // The first seven answer; the large engine is not resumed before the last one does.
  for (EngineIndex e = 0; e < 7; ++e) h.core->on_engine_paused(e, at_ms(305));
  effects = h.take();
  EXPECT_TRUE(effects.controls.empty());
  h.core->on_engine_paused(7, at_ms(310));
  effects = h.take();
  ASSERT_EQ(effects.controls.size(), 1u);
  EXPECT_EQ(effects.controls[0].engine, 8);
  EXPECT_EQ(effects.controls[0].kind, EngineControl::Kind::kResume);
  h.core->on_engine_resumed(8, at_ms(315));
  effects = h.take();
  ASSERT_EQ(effects.dispatches.size(), 1u);
  EXPECT_EQ(effects.dispatches[0].id, RequestId(2));
  EXPECT_EQ(effects.dispatches[0].engine, 8);
  ASSERT_EQ(effects.tier_changes.size(), 1u);
  EXPECT_EQ(effects.tier_changes[0].holder, EngineTier::kLarge);
  EXPECT_EQ(h.core->switch_latency(), milliseconds(15));
  // The small request stayed on its paused engine (KV kept); it was not ended.
  EXPECT_TRUE(h.core->engine_of(RequestId(1)).has_value());
  // The large request ends and the small tier is waiting: the GPUs go back.
  h.core->on_end(RequestId(2), Outcome::kCompleted, Reason::kNone, 10, at_ms(350));
  effects = h.take();
  ASSERT_EQ(effects.controls.size(), 1u);
  EXPECT_EQ(effects.controls[0].kind, EngineControl::Kind::kPause);
  effects = h.answer(effects, at_ms(355));
  EXPECT_EQ(effects.controls.size(), 8u);  // the small engines resume
  effects = h.answer(effects, at_ms(360));
  EXPECT_EQ(h.core->holder(), EngineTier::kSmall);
  EXPECT_EQ(h.core->tier_switches(), 2);
}

// A large request dispatched just before its engine was paused has no first token yet: it waits
// for its tier's next turn like a queued one, and the aging bound counts it. (Counting queued
// requests only, it waited out the small tier's whole hold.)
TEST(RequestLevelCoreTest, ALargeRequestPausedBeforeItsFirstTokenAgesLikeAQueuedOne) {
  const NodeSpec node = default_node_spec();
  RequestLevelOptions options = arrival_order_tier_options(/*lease=*/true);
  options.tiers.small_hold = milliseconds(5000);
  options.tiers.max_large_wait = milliseconds(1000);
  RequestLevelCore core(node, small_replicas_and_large_engine(8, 100000, 4, true), options);
  core.start(Time::zero());
  answer_controls(core, core.effects().controls, at_ms(1));
  core.effects().clear();
  auto spec = [](uint64_t id, int model, Time now) {
    RequestSpec s;
    s.id = RequestId(id);
    s.model = ModelId(static_cast<uint16_t>(model));
    s.slo_class = SloClassId(0);
    s.arrival = now;
    s.prompt_tokens = 100;
    s.max_tokens = 50;
    return s;
  };
  // The small tier is idle: the large request gets the GPUs at once and is dispatched.
  ASSERT_TRUE(core.submit(spec(2, 1, at_ms(2)), at_ms(2)));
  RequestLevelEffects effects = core.effects();
  core.effects().clear();
  answer_controls(core, effects.controls, at_ms(3));  // the small engines pause
  effects = core.effects();
  core.effects().clear();
  answer_controls(core, effects.controls, at_ms(4));  // the large engine resumes
  ASSERT_EQ(core.engine_of(RequestId(2)), EngineIndex(8));
  // A small request arrives; the large tier's hold (100 ms) ends before request 2's first token,
  // and the large engine pauses with it resident.
  ASSERT_TRUE(core.submit(spec(3, 0, at_ms(10)), at_ms(10)));
  core.effects().clear();
  core.on_timer(core.next_wakeup(at_ms(10)));
  effects = core.effects();
  core.effects().clear();
  answer_controls(core, effects.controls, at_ms(110));
  effects = core.effects();
  core.effects().clear();
  answer_controls(core, effects.controls, at_ms(111));
  core.effects().clear();
  ASSERT_EQ(core.holder(), EngineTier::kSmall);
  ASSERT_EQ(core.engine_of(RequestId(2)), EngineIndex(8));
  // The small tier's hold would last until 5.1 s; request 2 has waited its 1 s at 1.002 s.
  EXPECT_EQ(core.next_wakeup(at_ms(112)), at_ms(1002));
  core.on_timer(at_ms(1002));
  effects = core.effects();
  ASSERT_EQ(effects.controls.size(), 8u);
  EXPECT_EQ(effects.controls[0].kind, EngineControl::Kind::kPause);
}

TEST(RequestLevelCoreTest, AnIdleSmallTierHandsOverAtOnce) {
  Harness h(/*lease=*/true);
  h.answer(h.core->effects(), at_ms(1));
  h.core->on_engine_paused(8, at_ms(1));
  h.take();
  h.submit(1, 1, at_ms(5));
  RequestLevelEffects effects = h.take();
  EXPECT_EQ(effects.controls.size(), 8u);
  effects = h.answer(effects, at_ms(6));
  effects = h.answer(effects, at_ms(7));
  ASSERT_EQ(effects.dispatches.size(), 1u);
  EXPECT_EQ(effects.dispatches[0].engine, 8);
}

TEST(RequestLevelCoreTest, ExclusiveModeGatesDispatchAndNeverPauses) {
  Harness h(/*lease=*/false, /*pausable=*/false);
  EXPECT_TRUE(h.take().controls.empty());
  h.submit(1, 0, at_ms(1));
  EXPECT_EQ(h.take().dispatches.size(), 1u);
  h.submit(2, 1, at_ms(2));
  h.core->on_timer(at_ms(300));  // the small tier's hold is over: it drains
  h.submit(3, 0, at_ms(301));    // and takes no new request meanwhile
  RequestLevelEffects effects = h.take();
  EXPECT_TRUE(effects.dispatches.empty());
  EXPECT_TRUE(effects.controls.empty());
  h.core->on_end(RequestId(1), Outcome::kCompleted, Reason::kNone, 5, at_ms(320));
  effects = h.take();
  ASSERT_EQ(effects.dispatches.size(), 1u);
  EXPECT_EQ(effects.dispatches[0].id, RequestId(2));
  EXPECT_TRUE(effects.controls.empty());
  // The large tier holds until its request ends (the small one waits past its 100 ms hold, then
  // the large tier drains).
  h.core->on_timer(at_ms(500));
  EXPECT_TRUE(h.take().dispatches.empty());
  h.core->on_end(RequestId(2), Outcome::kCompleted, Reason::kNone, 5, at_ms(600));
  effects = h.take();
  ASSERT_EQ(effects.dispatches.size(), 1u);
  EXPECT_EQ(effects.dispatches[0].id, RequestId(3));
}

TEST(RequestLevelCoreTest, CancelEndsOnceAndAbortsADispatchedRequest) {
  Harness h(/*lease=*/false, /*pausable=*/false);
  h.submit(1, 0, at_ms(1));
  h.take();
  h.core->cancel(RequestId(1), at_ms(2));
  RequestLevelEffects effects = h.take();
  ASSERT_EQ(effects.aborts.size(), 1u);
  ASSERT_EQ(effects.finished.size(), 1u);
  EXPECT_EQ(effects.finished[0].reason, Reason::kClientCancelled);
  // The engine's own end, arriving after, changes nothing.
  h.core->on_end(RequestId(1), Outcome::kCompleted, Reason::kNone, 3, at_ms(3));
  h.core->cancel(RequestId(1), at_ms(4));
  EXPECT_TRUE(h.take().finished.empty());
  EXPECT_EQ(h.ended[1], 1);
}

TEST(RequestLevelCoreTest, AFailedSmallEngineFailsItsRequestsAndOthersTakeTheQueue) {
  Harness h(/*lease=*/false, /*pausable=*/false, /*max_num_seqs=*/1);
  for (uint64_t id = 1; id <= 9; ++id) h.submit(id, 0, at_ms(1));
  h.take();
  const EngineIndex lost = *h.core->engine_of(RequestId(1));
  h.core->on_engine_failed(lost, at_ms(2));
  RequestLevelEffects effects = h.take();
  ASSERT_EQ(effects.finished.size(), 1u);
  EXPECT_EQ(effects.finished[0].outcome, Outcome::kFailed);
  EXPECT_EQ(effects.finished[0].reason, Reason::kEngineFailed);
  ASSERT_EQ(effects.aborts.size(), 1u);
  EXPECT_TRUE(effects.dispatches.empty());  // the failed engine takes nothing
  h.core->on_end(RequestId(2), Outcome::kCompleted, Reason::kNone, 1, at_ms(3));
  effects = h.take();
  ASSERT_EQ(effects.dispatches.size(), 1u);
  EXPECT_NE(effects.dispatches[0].engine, lost);
  // Recovered, it takes work again.
  h.core->on_engine_recovered(lost, at_ms(4));
  h.submit(10, 0, at_ms(5));
  effects = h.take();
  ASSERT_EQ(effects.dispatches.size(), 1u);
  EXPECT_EQ(effects.dispatches[0].engine, lost);
}

TEST(RequestLevelCoreTest, AFailedLargeEngineFailsLargeRequestsFastWithARetryElsewhereReason) {
  Harness h(/*lease=*/false, /*pausable=*/false, /*max_num_seqs=*/1);
  h.submit(1, 1, at_ms(1));  // the small tier is idle: the large one takes the GPUs
  ASSERT_EQ(h.take().dispatches.size(), 1u);
  h.submit(2, 1, at_ms(2));
  h.submit(3, 0, at_ms(2));
  h.core->on_engine_failed(8, at_ms(3));
  RequestLevelEffects effects = h.take();
  std::map<uint64_t, RequestRecord> records;
  for (const RequestRecord& r : effects.finished) records[r.id.value()] = r;
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].reason, Reason::kEngineFailed);
  EXPECT_EQ(records[2].reason, Reason::kNoCapacity);
  EXPECT_TRUE(retry_elsewhere(records[2].reason));
  // The small tier gets the GPUs back at once.
  ASSERT_EQ(effects.dispatches.size(), 1u);
  EXPECT_EQ(effects.dispatches[0].id, RequestId(3));
  EXPECT_FALSE(h.submit(4, 1, at_ms(4)));
  effects = h.take();
  ASSERT_EQ(effects.finished.size(), 1u);
  EXPECT_EQ(effects.finished[0].outcome, Outcome::kRejected);
  EXPECT_EQ(effects.finished[0].reason, Reason::kNoCapacity);
}

TEST(RequestLevelCoreTest, AQueuedRequestPastItsOwnDeadlineIsDropped) {
  Harness h(/*lease=*/false, /*pausable=*/false, /*max_num_seqs=*/1);
  for (uint64_t id = 1; id <= 8; ++id) h.submit(id, 0, at_ms(1));
  RequestSpec late = h.spec(9, 0, at_ms(1));
  late.ttft_deadline = at_ms(50);
  h.core->submit(late, at_ms(1));
  h.take();
  EXPECT_EQ(h.core->next_wakeup(at_ms(1)), at_ms(50));
  h.core->on_timer(at_ms(50));
  const RequestLevelEffects effects = h.take();
  ASSERT_EQ(effects.finished.size(), 1u);
  EXPECT_EQ(effects.finished[0].reason, Reason::kDeadlineExpired);
}

TEST(RequestLevelCoreTest, QueueCapRejects) {
  NodeSpec node = default_node_spec();
  std::vector<EngineDescriptor> engines = {{ModelId(0), false, {GpuId(0)}, 1000, 1, false},
                                           {ModelId(1), true, {GpuId(0)}, 1000, 1, false}};
  RequestLevelOptions options;
  options.lease = false;
  options.queue_cap = 1;
  RequestLevelCore core(node, engines, options);
  core.start(Time::zero());
  RequestSpec spec;
  spec.model = ModelId(0);
  for (uint64_t id = 1; id <= 3; ++id) {
    spec.id = RequestId(id);
    core.submit(spec, at_ms(1));
  }
  ASSERT_EQ(core.effects().finished.size(), 1u);
  EXPECT_EQ(core.effects().finished[0].reason, Reason::kQueueFull);
}

// Random events in both modes: every request ends exactly once, whatever happens, and the
// invariants hold after every event (checked inside the core in test builds, and here).
TEST(RequestLevelCoreTest, RandomEventsEndEveryRequestExactlyOnce) {
  for (const bool lease : {true, false}) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      Harness h(lease, /*pausable=*/lease, /*max_num_seqs=*/3);
      TestRandom rng(seed);
      std::vector<EngineControl> pending;
      uint64_t next_id = 1;
      Time now = at_ms(1);
      for (int step = 0; step < 400; ++step) {
        now += milliseconds(1 + static_cast<int64_t>(rng.uniform_int(0, 30)));
        const int64_t what = rng.uniform_int(0, 9);
        if (what <= 2) {
          RequestSpec spec = h.spec(next_id, rng.uniform_int(0, 3) == 0 ? 1 : 0, now);
          if (rng.uniform_int(0, 4) == 0) spec.ttft_deadline = now + milliseconds(40);
          h.core->submit(spec, now);
          ++next_id;
        } else if (what <= 4) {
          const uint64_t id =
              static_cast<uint64_t>(1 + rng.uniform_int(0, static_cast<int64_t>(next_id)));
          if (h.core->engine_of(RequestId(id))) {
            h.core->on_end(RequestId(id), Outcome::kCompleted, Reason::kNone, 3, now);
          }
        } else if (what == 5) {
          h.core->cancel(RequestId(static_cast<uint64_t>(
                             1 + rng.uniform_int(0, static_cast<int64_t>(next_id)))),
                         now);
        } else if (what == 6 && !pending.empty()) {
          answer_controls(*h.core, {pending.front()}, now);
          pending.erase(pending.begin());
        } else if (what == 7) {
          const auto engine = static_cast<EngineIndex>(rng.uniform_int(0, 8));
          if (h.core->engines()[engine].healthy) {
            h.core->on_engine_failed(engine, now);
          } else {
            h.core->on_engine_recovered(engine, now);
          }
        } else {
          h.core->on_timer(now);
        }
        const RequestLevelEffects effects = h.take();
        pending.insert(pending.end(), effects.controls.begin(), effects.controls.end());
        h.core->check_invariants();
      }
      h.core->stop(now, Reason::kDriverStopped);
      h.take();
      EXPECT_EQ(h.core->live_requests(), 0u);
      for (uint64_t id = 1; id < next_id; ++id) {
        EXPECT_EQ(h.ended[id], 1) << "request " << id << " seed " << seed << " lease " << lease;
      }
    }
  }
}

}  // namespace
}  // namespace gangway
