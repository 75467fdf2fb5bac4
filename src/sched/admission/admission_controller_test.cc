#include "sched/admission/admission_controller.h"

#include <gtest/gtest.h>

#include "core/node_spec_for_tests.h"
#include "core/time_for_tests.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

RequestSpec request(uint8_t slo_class, int32_t prompt = 100, int32_t max_tokens = 100) {
  RequestSpec spec;
  spec.id = RequestId(1);
  spec.model = ModelId(0);
  spec.slo_class = SloClassId(slo_class);
  spec.prompt_tokens = prompt;
  spec.max_tokens = max_tokens;
  return spec;
}

AdmissionQuery predicted(int64_t ttft_ms) {
  AdmissionQuery query;
  query.predicted_ttft = milliseconds(ttft_ms);
  query.predicted_wait = milliseconds(ttft_ms / 2);
  return query;
}

TEST(AdmissionController, LadderStepsDownWithoutArrivalsOnceTheSamplesAreStale) {
  const NodeSpec node = node_with_default_classes();
  AdmissionController admission(node, AdmissionOptions{});
  EXPECT_EQ(admission.next_pressure_refresh(at_ms(0)), Time::max());  // at normal
  int64_t t = 0;
  for (; t <= 700; t += 10) admission.observe_pressure(ModelId(0), 2.0, at_ms(t));
  ASSERT_EQ(admission.level(), OverloadLevel::kShedBatch);
  const int64_t last = t - 10;
  // A sample speaks for a second: nothing moves before it is stale.
  EXPECT_FALSE(admission.refresh_pressure(at_ms(last + 1000)));
  EXPECT_EQ(admission.level(), OverloadLevel::kShedBatch);
  const Time stale = admission.next_pressure_refresh(at_ms(last + 500));
  EXPECT_GT(stale, at_ms(last + 1000));
  EXPECT_LT(stale, at_ms(last + 1001));
  // Then the pressure is zero: a rung per 200 ms dwell, each at the time asked for.
  Time now = stale;
  int steps = 0;
  while (admission.level() != OverloadLevel::kNormal && steps < 10) {
    admission.refresh_pressure(now);
    now = admission.next_pressure_refresh(now);
    ++steps;
  }
  EXPECT_EQ(admission.level(), OverloadLevel::kNormal);
  EXPECT_EQ(admission.pressure(), 0);
  EXPECT_EQ(now, Time::max());
  EXPECT_EQ(steps, 4);  // start falling, then three steps a dwell apart
  // With no dwell, every rung at once.
  AdmissionOptions no_dwell;
  no_dwell.ladder.dwell = Duration(0);
  AdmissionController quick(node, no_dwell);
  quick.observe_pressure(ModelId(0), 2.0, at_ms(0));
  quick.observe_pressure(ModelId(0), 2.0, at_ms(1));
  ASSERT_GT(quick.level(), OverloadLevel::kDeferBatch);
  EXPECT_TRUE(quick.refresh_pressure(at_ms(1100)));
  EXPECT_EQ(quick.level(), OverloadLevel::kNormal);
  // Off: never.
  AdmissionOptions off;
  off.enabled = false;
  AdmissionController disabled(node, off);
  EXPECT_EQ(disabled.next_pressure_refresh(at_ms(0)), Time::max());
  EXPECT_FALSE(disabled.refresh_pressure(at_ms(5000)));
}

TEST(AdmissionController, UnpaceableArrivalIsAPredictedMissOnlyWhereItsClassHasATpotTarget) {
  NodeSpec node = node_with_default_classes();
  node.slo_classes[0].on_predicted_miss = MissAction::kReject;
  AdmissionController admission(node, AdmissionOptions{});
  AdmissionQuery unpaceable = predicted(100);  // the first token would be on time
  unpaceable.pace_retry_after = milliseconds(1500);
  // Interactive (50 ms TPOT target): rejected as unmeetable now, with the policy's Retry-After.
  const AdmissionVerdict rejected = admission.decide(request(0), unpaceable, at_ms(0));
  EXPECT_FALSE(rejected.admit);
  EXPECT_EQ(rejected.reason, Reason::kDeadlineUnmeetable);
  ASSERT_TRUE(rejected.retry_after.has_value());
  EXPECT_EQ(*rejected.retry_after, milliseconds(1500));
  // A short Retry-After is raised to the least one admission gives.
  unpaceable.pace_retry_after = milliseconds(200);
  const AdmissionVerdict soon = admission.decide(request(0), unpaceable, at_ms(0));
  ASSERT_TRUE(soon.retry_after.has_value());
  EXPECT_EQ(*soon.retry_after, std::chrono::seconds(1));
  // Standard has no TPOT target: the pace says nothing about it.
  EXPECT_TRUE(admission.decide(request(1), unpaceable, at_ms(0)).admit);
  // A paceable interactive arrival on time is admitted.
  EXPECT_TRUE(admission.decide(request(0), predicted(100), at_ms(0)).admit);
}

TEST(AdmissionController, PredictedMissIsRejectedDowngradedOrTakenByClassPolicy) {
  NodeSpec node = node_with_default_classes();
  node.slo_classes[0].on_predicted_miss = MissAction::kReject;
  AdmissionController admission(node, AdmissionOptions{});
  // Interactive within its target: admitted as asked.
  AdmissionVerdict ok = admission.decide(request(0), predicted(150), at_ms(0));
  EXPECT_TRUE(ok.admit);
  EXPECT_EQ(ok.slo_class, SloClassId(0));
  // 300 ms predicted against 200: rejected, retry after at least a second.
  AdmissionVerdict late = admission.decide(request(0), predicted(300), at_ms(0));
  EXPECT_FALSE(late.admit);
  EXPECT_EQ(late.reason, Reason::kDeadlineUnmeetable);
  ASSERT_TRUE(late.retry_after.has_value());
  EXPECT_GE(*late.retry_after, std::chrono::seconds(1));
  // Standard (2 s, downgrade_to batch by default) predicted at 3 s: served as batch.
  AdmissionVerdict down = admission.decide(request(1), predicted(3000), at_ms(0));
  EXPECT_TRUE(down.admit);
  EXPECT_EQ(down.slo_class, SloClassId(2));
  EXPECT_EQ(admission.counters().downgraded, 1);
  // Best effort: admitted and counted.
  node.slo_classes[0].on_predicted_miss = MissAction::kBestEffort;
  AdmissionController lenient(node, AdmissionOptions{});
  AdmissionVerdict taken = lenient.decide(request(0), predicted(300), at_ms(0));
  EXPECT_TRUE(taken.admit);
  EXPECT_TRUE(taken.best_effort);
  // Batch has no target: never rejected for lateness.
  EXPECT_TRUE(admission.decide(request(2), predicted(60000), at_ms(0)).admit);
}

TEST(AdmissionController, RequestDeadlineTighterThanTheClassTargetCounts) {
  const NodeSpec node = node_with_default_classes();
  AdmissionController admission(node, AdmissionOptions{});
  RequestSpec spec = request(1);  // standard: 2 s
  spec.ttft_deadline = spec.arrival + milliseconds(100);
  spec.slo_class = SloClassId(0);
  EXPECT_FALSE(admission.decide(spec, predicted(150), at_ms(0)).admit);
}

TEST(AdmissionController, TokenBucketsLimitPerTenantAndTellWhenToRetry) {
  const NodeSpec node = node_with_default_classes();
  AdmissionOptions options;
  RateLimit limit;
  limit.tenant = TenantId(1);
  limit.requests_per_s = 10;
  limit.burst_s = 0.5;  // a burst of 5 requests
  options.rate_limits.push_back(limit);
  AdmissionController admission(node, options);
  RequestSpec spec = request(2);
  spec.tenant = TenantId(1);
  int admitted = 0;
  AdmissionVerdict last;
  for (int i = 0; i < 8; ++i) {
    last = admission.decide(spec, predicted(10), at_ms(0));
    admitted += last.admit ? 1 : 0;
  }
  EXPECT_EQ(admitted, 5);
  EXPECT_EQ(last.reason, Reason::kRateLimited);
  ASSERT_TRUE(last.retry_after.has_value());
  // Another tenant is not limited by that rule.
  RequestSpec other = request(2);
  other.tenant = TenantId(0);
  EXPECT_TRUE(admission.decide(other, predicted(10), at_ms(0)).admit);
  // 100 ms later one more token has come.
  EXPECT_TRUE(admission.decide(spec, predicted(10), at_ms(100)).admit);
  EXPECT_FALSE(admission.decide(spec, predicted(10), at_ms(100)).admit);
}

TEST(AdmissionController, ScreeningChecksTheRateLimitsWithoutTakingFromThem) {
  const NodeSpec node = node_with_default_classes();
  AdmissionOptions options;
  RateLimit limit;
  limit.tenant = TenantId(1);
  limit.requests_per_s = 10;
  limit.burst_s = 0.2;  // a burst of 2 requests
  options.rate_limits.push_back(limit);
  AdmissionController admission(node, options);
  RequestSpec spec = request(2);
  spec.tenant = TenantId(1);
  // Screening alone takes nothing: any number of screens pass while the bucket is full.
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(admission.screen(spec, at_ms(0)).has_value());
  EXPECT_TRUE(admission.decide(spec, predicted(10), at_ms(0)).admit);
  EXPECT_TRUE(admission.decide(spec, predicted(10), at_ms(0)).admit);
  const std::optional<AdmissionVerdict> screened = admission.screen(spec, at_ms(0));
  ASSERT_TRUE(screened.has_value());
  EXPECT_FALSE(screened->admit);
  EXPECT_EQ(screened->reason, Reason::kRateLimited);
  ASSERT_TRUE(screened->retry_after.has_value());
  EXPECT_EQ(admission.counters().decisions[static_cast<int>(Reason::kRateLimited)], 1);
}

TEST(AdmissionController, QueueCapBoundsEachModelAndClass) {
  const NodeSpec node = node_with_default_classes();
  AdmissionOptions options;
  options.queue_cap = 3;
  AdmissionController admission(node, options);
  AdmissionQuery query = predicted(10);
  query.queued_same_class = 2;
  EXPECT_TRUE(admission.decide(request(2), query, at_ms(0)).admit);
  query.queued_same_class = 3;
  const AdmissionVerdict full = admission.decide(request(2), query, at_ms(0));
  EXPECT_FALSE(full.admit);
  EXPECT_EQ(full.reason, Reason::kQueueFull);
  EXPECT_TRUE(retry_elsewhere(full.reason));
}

TEST(AdmissionController, LadderShedsBatchThenStandardButNeverTheMostImportantWholesale) {
  const NodeSpec node = node_with_default_classes();
  AdmissionController admission(node, AdmissionOptions{});
  int64_t t = 0;
  // Pressure 1.0: up to shed_batch (0.9) after three dwells, not shed_standard (1.2).
  for (; t <= 2000; t += 10) admission.observe_pressure(ModelId(0), 1.0, at_ms(t));
  EXPECT_EQ(admission.level(), OverloadLevel::kShedBatch);
  EXPECT_TRUE(admission.sheds(SloClassId(2)));
  EXPECT_FALSE(admission.sheds(SloClassId(1)));
  EXPECT_EQ(admission.decide(request(2), predicted(10), at_ms(t)).reason, Reason::kShed);
  // Pressure 2.0: every rung; standard is shed, interactive only when predicted late.
  for (; t <= 5000; t += 10) admission.observe_pressure(ModelId(0), 2.0, at_ms(t));
  EXPECT_EQ(admission.level(), OverloadLevel::kShedInteractive);
  EXPECT_TRUE(admission.sheds(SloClassId(1)));
  EXPECT_FALSE(admission.sheds(SloClassId(0)));
  EXPECT_TRUE(admission.decide(request(0), predicted(150), at_ms(t)).admit);
  // Load gone: the ladder steps back down one rung per dwell.
  for (; t <= 8000; t += 10) admission.observe_pressure(ModelId(0), 0.0, at_ms(t));
  EXPECT_EQ(admission.level(), OverloadLevel::kNormal);
  EXPECT_TRUE(admission.decide(request(2), predicted(10), at_ms(t)).admit);
}

TEST(AdmissionController, CapsBatchMaxTokensOnItsRung) {
  const NodeSpec node = node_with_default_classes();
  AdmissionOptions options;
  options.capped_max_tokens = 64;
  AdmissionController admission(node, options);
  for (int64_t t = 0; t <= 1000; t += 10) admission.observe_pressure(ModelId(0), 0.8, at_ms(t));
  EXPECT_EQ(admission.level(), OverloadLevel::kCapBatchTokens);
  EXPECT_EQ(admission.decide(request(2, 100, 1000), predicted(10), at_ms(1000)).max_tokens, 64);
  EXPECT_EQ(admission.decide(request(0, 100, 1000), predicted(10), at_ms(1000)).max_tokens, 1000);
  EXPECT_TRUE(admission.defers(SloClassId(2)));
  EXPECT_FALSE(admission.defers(SloClassId(0)));
}

TEST(AdmissionController, DisabledAdmitsLateRequestsButKeepsCapsAndLimits) {
  const NodeSpec node = node_with_default_classes();
  AdmissionOptions options;
  options.enabled = false;
  options.queue_cap = 1;
  AdmissionController admission(node, options);
  EXPECT_TRUE(admission.decide(request(0), predicted(5000), at_ms(0)).admit);
  AdmissionQuery full = predicted(5000);
  full.queued_same_class = 1;
  EXPECT_EQ(admission.decide(request(0), full, at_ms(0)).reason, Reason::kQueueFull);
  AdmissionQuery lost = predicted(10);
  lost.no_capacity = true;
  EXPECT_EQ(admission.decide(request(0), lost, at_ms(0)).reason, Reason::kNoCapacity);
}

TEST(AdmissionController, LearnsItsBiasPerClassAndForgetsItWhenNoSamplesCome) {
  NodeSpec node = node_with_default_classes();
  ModelSpec second = node.models.front();
  second.id = ModelId(1);
  second.name = "m2";
  node.models.push_back(second);
  AdmissionController admission(node, AdmissionOptions{});
  const SloClassId batch = node.slo_classes.back().id;
  const SloClassId interactive = node.slo_classes.front().id;
  ASSERT_NE(batch, interactive);
  for (int i = 0; i < 200; ++i) {
    admission.note_prediction(ModelId(0), batch, milliseconds(100), milliseconds(300), std::nullopt,
                              at_ms(i));
  }
  // Capped at half the tightest target (200 ms).
  EXPECT_GT(admission.correction(ModelId(0), batch, at_ms(200)), milliseconds(90));
  EXPECT_LE(admission.correction(ModelId(0), batch, at_ms(200)), milliseconds(100));
  EXPECT_LT(admission.correction(ModelId(0), batch, at_ms(20200)), milliseconds(1));
  // Batch work's late first tokens say nothing of interactive predictions, nor of another
  // model's.
  EXPECT_EQ(admission.correction(ModelId(0), interactive, at_ms(200)), Duration(0));
  EXPECT_EQ(admission.correction(ModelId(1), batch, at_ms(200)), Duration(0));
}

// With admission.keep_promises, the correction of a class with a target is the margin at which
// one admitted request in a hundred misses: predictions that are low but leave the request on
// time cost nothing, broken promises raise it until about one in a hundred is broken.
TEST(AdmissionController, PromiseMarginGrowsOnlyWithBrokenPromises) {
  const NodeSpec node = node_with_default_classes();
  AdmissionController admission(node, AdmissionOptions{});
  const SloClassId interactive(0);
  // Predicted 50 ms, got 150 ms: late against the prediction, on time against the 200 ms target.
  for (int i = 0; i < 500; ++i) {
    admission.note_prediction(ModelId(0), interactive, milliseconds(50), milliseconds(150), true,
                              at_ms(i));
  }
  EXPECT_EQ(admission.correction(ModelId(0), interactive, at_ms(500)), Duration(0));
  // One promise in two broken: the margin climbs to the target, the most it takes.
  for (int i = 0; i < 1000; ++i) {
    admission.note_prediction(ModelId(0), interactive, milliseconds(50), milliseconds(150),
                              i % 2 != 0, at_ms(500 + i));
  }
  const Duration grown = admission.correction(ModelId(0), interactive, at_ms(1500));
  EXPECT_GT(grown, milliseconds(150));
  EXPECT_LE(grown, milliseconds(200));
  // One in two hundred, more rarely than the one in a hundred it allows: it comes down (all
  // at one instant, so that the fade without samples plays no part).
  for (int i = 0; i < 20000; ++i) {
    admission.note_prediction(ModelId(0), interactive, milliseconds(50), milliseconds(150),
                              i % 200 != 0, at_ms(1500));
  }
  const Duration lowered = admission.correction(ModelId(0), interactive, at_ms(1500));
  EXPECT_LT(lowered, grown - milliseconds(50));
  EXPECT_GT(lowered, Duration(0));
}

}  // namespace
}  // namespace gangway
