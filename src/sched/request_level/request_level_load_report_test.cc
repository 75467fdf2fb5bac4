// The request-level core's load report: the same keys as the iteration-level one, from the
// core's queues, the engines' reservations, the tier planner and the measured service time.
#include "sched/request_level/request_level_load_report.h"

#include <gtest/gtest.h>

#include "core/time_for_tests.h"
#include "sched/request_level/request_level_harness_for_tests.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

// Two small replicas (engines 0, 1) of llama-3-8b holding two requests each, and the large
// model's engine (2); lease mode with the small tier holding 300 ms and the large 100 ms.
struct ReportHarness {
  ReportHarness() {
    node = default_node_spec();
    core =
        std::make_unique<RequestLevelCore>(node, small_replicas_and_large_engine(2, 1000, 2, true),
                                           arrival_order_tier_options(/*lease=*/true));
    core->start(Time::zero());
    answer(Time::zero());
  }
  void submit(uint64_t id, int model, int slo, Time now) {
    RequestSpec spec;
    spec.id = RequestId(id);
    spec.model = ModelId(static_cast<uint16_t>(model));
    spec.slo_class = SloClassId(static_cast<uint8_t>(slo));
    spec.arrival = now;
    spec.prompt_tokens = 100;
    spec.max_tokens = 150;
    core->submit(spec, now);
    answer(now);
  }
  // Answers the pause and resume calls asked for, at `now`, until none is left.
  void answer(Time now) {
    while (!core->effects().controls.empty()) {
      const std::vector<EngineControl> controls = core->effects().controls;
      core->effects().clear();
      answer_controls(*core, controls, now);
    }
    core->effects().clear();
  }
  const ModelLoad& model(const LoadReport& report, int m) { return report.models.at(m); }

  NodeSpec node;
  std::unique_ptr<RequestLevelCore> core;
};

TEST(RequestLevelLoadReportTest, CountsQueuedAndRunningPerModelAndClass) {
  ReportHarness h;
  for (uint64_t id = 1; id <= 5; ++id) h.submit(id, 0, id == 5 ? 1 : 0, at_ms(1));
  const LoadReport report = compute_load_report(*h.core, at_ms(2));
  const ModelLoad& small = h.model(report, 0);
  EXPECT_EQ(small.tier, "small");
  EXPECT_EQ(small.running, 4);  // two replicas, two each
  EXPECT_EQ(small.queued, 1);
  EXPECT_EQ(small.classes.at(0).running, 4);
  EXPECT_EQ(small.classes.at(1).queued, 1);
  // 250 tokens reserved per request, 4 of them over 2000 tokens of KV.
  EXPECT_DOUBLE_EQ(small.kv_usage, 0.5);
  EXPECT_TRUE(small.has_capacity);
  EXPECT_EQ(report.live_requests, 5);
  EXPECT_EQ(report.gang_phase, "off");
  EXPECT_EQ(report.overload_level, "normal");
  EXPECT_DOUBLE_EQ(report.ttft_target_ms, 200.0);
}

TEST(RequestLevelLoadReportTest, TheQueueAheadWaitsForCompletionsAtTheMeasuredServiceTime) {
  ReportHarness h;
  for (uint64_t id = 1; id <= 4; ++id) h.submit(id, 0, 0, at_ms(0));
  // A free place: no wait; a full node: the new request waits for one completion of the four
  // places, one service time (1 s before one is measured) over four.
  const LoadReport full = compute_load_report(*h.core, at_ms(0));
  EXPECT_NEAR(h.model(full, 0).predicted_wait_ms, 250.0, 1e-6);
  EXPECT_DOUBLE_EQ(h.model(full, 0).headroom_rps, 0.0);  // past the 200 ms target
  h.core->on_end(RequestId(1), Outcome::kCompleted, Reason::kNone, 10, at_ms(400));
  h.core->effects().clear();
  ASSERT_TRUE(h.core->mean_service(ModelId(0)));
  EXPECT_EQ(*h.core->mean_service(ModelId(0)), milliseconds(400));
  const LoadReport one_free = compute_load_report(*h.core, at_ms(400));
  EXPECT_DOUBLE_EQ(h.model(one_free, 0).predicted_wait_ms, 0.0);
  // Four places at 400 ms each complete 10 requests a second: all of it is headroom.
  EXPECT_NEAR(h.model(one_free, 0).headroom_rps, 10.0, 1e-9);
}

TEST(RequestLevelLoadReportTest, ThePromisedWaitCountsOnlyTheClassesWithATarget) {
  ReportHarness h;
  // Four places taken, then three batch requests (class 2, no TTFT target) queued: a new
  // request waits behind all three, a new request with a target behind none of them.
  for (uint64_t id = 1; id <= 4; ++id) h.submit(id, 0, 0, at_ms(0));
  for (uint64_t id = 5; id <= 7; ++id) h.submit(id, 0, 2, at_ms(0));
  const LoadReport report = compute_load_report(*h.core, at_ms(0));
  EXPECT_NEAR(h.model(report, 0).predicted_wait_ms, 1000.0, 1e-6);  // 4 ahead, 4 places, 1 s
  EXPECT_NEAR(h.model(report, 0).promised_wait_ms, 250.0, 1e-6);
}

TEST(RequestLevelLoadReportTest, AWaitingLargeRequestMakesTheLeasePendingUntilTheHandOver) {
  ReportHarness h;
  h.submit(1, 0, 0, at_ms(0));  // the small tier has work: it keeps its 300 ms hold
  h.submit(2, 1, 0, at_ms(50));
  const LoadReport pending = compute_load_report(*h.core, at_ms(100));
  EXPECT_EQ(pending.gang_phase, "pending");
  ASSERT_TRUE(pending.lease_start_s);
  EXPECT_NEAR(*pending.lease_start_s, 0.3, 1e-9);  // end of the small hold; no switch measured
  EXPECT_NEAR(pending.lease_expected_ms, 100.0, 1e-9);
  // Until the hand-over; the large engine has a free place then.
  EXPECT_NEAR(h.model(pending, 1).predicted_wait_ms, 200.0, 1e-6);
  EXPECT_DOUBLE_EQ(h.model(pending, 0).predicted_wait_ms, 0.0);
  // The hold ends: the switch pauses the small tier, resumes the large one (answered 10 ms on).
  h.core->on_timer(at_ms(300));
  h.answer(at_ms(310));
  ASSERT_EQ(h.core->holder(), EngineTier::kLarge);
  const LoadReport active = compute_load_report(*h.core, at_ms(320));
  EXPECT_EQ(active.gang_phase, "active");
  EXPECT_NEAR(*active.lease_start_s, 0.31, 1e-9);
  EXPECT_EQ(h.model(active, 1).running, 1);
  EXPECT_EQ(h.model(active, 0).running, 1);  // paused in place, still counted
  // A small request now waits for the large hold's end and a switch back (10 ms measured).
  EXPECT_GT(h.model(active, 0).predicted_wait_ms, 0.0);
}

TEST(RequestLevelLoadReportTest, AModelWithoutAHealthyEngineHasNoCapacityNorHeadroom) {
  ReportHarness h;
  h.core->on_engine_failed(2, at_ms(1));
  h.core->effects().clear();
  const LoadReport report = compute_load_report(*h.core, at_ms(2));
  EXPECT_FALSE(h.model(report, 1).has_capacity);
  EXPECT_DOUBLE_EQ(h.model(report, 1).headroom_rps, 0.0);
  EXPECT_TRUE(h.model(report, 0).has_capacity);
  EXPECT_GT(h.model(report, 0).headroom_rps, 0.0);
}

}  // namespace
}  // namespace gangway
