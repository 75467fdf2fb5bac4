#include "metrics/request_stats.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/time_for_tests.h"
#include "metrics/allocation_count_for_tests.h"

namespace gangway {
namespace {

// A completed request: queued 10 ms, first token at 50 ms, 11 output tokens ending at 150 ms
// (TPOT 10 ms), e2e 150 ms.
RequestRecord completed_record(bool slo_met) {
  RequestRecord record;
  record.outcome = Outcome::kCompleted;
  record.reason = Reason::kNone;
  record.arrival = at_ms(0);
  record.first_scheduled = at_ms(10);
  record.first_token = at_ms(50);
  record.finished = at_ms(150);
  record.prompt_tokens = 100;
  record.cached_prompt_tokens = 40;
  record.output_tokens = 11;
  record.slo_met = slo_met;
  return record;
}

RequestRecord rejected_record(Reason reason) {
  RequestRecord record;
  record.outcome = Outcome::kRejected;
  record.reason = reason;
  record.arrival = at_ms(0);
  record.finished = at_ms(0);
  record.prompt_tokens = 500;  // never scheduled: must not count toward prompt tokens
  return record;
}

TEST(RequestStats, CountsEachOutcomeOnce) {
  RequestStats stats;
  for (int i = 0; i < 6; ++i) stats.on_arrival();
  stats.on_finished(completed_record(true));
  stats.on_finished(completed_record(false));
  stats.on_finished(rejected_record(Reason::kQueueFull));
  RequestRecord cancelled = completed_record(false);
  cancelled.outcome = Outcome::kCancelled;
  cancelled.reason = Reason::kClientCancelled;
  stats.on_finished(cancelled);
  RequestRecord failed = rejected_record(Reason::kEngineFailed);
  failed.outcome = Outcome::kFailed;
  stats.on_finished(failed);

  EXPECT_EQ(stats.arrived(), 6u);
  EXPECT_EQ(stats.completed(), 2u);
  EXPECT_EQ(stats.rejected(), 1u);
  EXPECT_EQ(stats.cancelled(), 1u);
  EXPECT_EQ(stats.failed(), 1u);
  EXPECT_EQ(stats.finished(), 5u);
  EXPECT_EQ(stats.in_flight(), 1);
  EXPECT_EQ(stats.slo_met(), 1u);
  EXPECT_EQ(stats.count_with_reason(Reason::kQueueFull), 1u);
  EXPECT_EQ(stats.count_with_reason(Reason::kClientCancelled), 1u);
  EXPECT_EQ(stats.count_with_reason(Reason::kEngineFailed), 1u);
  EXPECT_EQ(stats.count_with_reason(Reason::kNone), 0u);  // completed ones are not "reasons"
}

TEST(RequestStats, NonCompletedNeverMeetsItsSlo) {
  RequestStats stats;
  stats.on_arrival();
  RequestRecord cancelled = completed_record(true);
  cancelled.outcome = Outcome::kCancelled;
  cancelled.reason = Reason::kClientCancelled;
  stats.on_finished(cancelled);
  EXPECT_EQ(stats.slo_met(), 0u);
}

TEST(RequestStats, LatencyHistogramsRecordOnlyWhatTheRequestReached) {
  RequestStats stats;
  stats.on_finished(completed_record(true));
  stats.on_finished(rejected_record(Reason::kShed));
  RequestRecord cancelled_after_one_token = completed_record(false);
  cancelled_after_one_token.outcome = Outcome::kCancelled;
  cancelled_after_one_token.reason = Reason::kClientCancelled;
  cancelled_after_one_token.output_tokens = 1;
  stats.on_finished(cancelled_after_one_token);

  EXPECT_EQ(stats.queue_ms().count(), 2u);  // both scheduled ones
  EXPECT_EQ(stats.ttft_ms().count(), 2u);   // both with a first token
  EXPECT_EQ(stats.tpot_ms().count(), 1u);   // only the one with two or more tokens
  EXPECT_EQ(stats.e2e_ms().count(), 1u);    // completed only
  EXPECT_DOUBLE_EQ(stats.queue_ms().mean(), 10.0);
  EXPECT_DOUBLE_EQ(stats.ttft_ms().mean(), 50.0);
  EXPECT_DOUBLE_EQ(stats.tpot_ms().mean(), 10.0);
  EXPECT_DOUBLE_EQ(stats.e2e_ms().max(), 150.0);
}

TEST(RequestStats, PromptTokensCountOnlyScheduledRequests) {
  RequestStats stats;
  stats.on_finished(completed_record(true));
  stats.on_finished(completed_record(true));
  stats.on_finished(rejected_record(Reason::kQueueFull));
  EXPECT_EQ(stats.prompt_tokens(), 200u);
  EXPECT_EQ(stats.cached_prompt_tokens(), 80u);
  EXPECT_EQ(stats.output_tokens(), 22u);
  EXPECT_DOUBLE_EQ(stats.to_json(1.0)["prefix_hit_rate"].get<double>(), 0.4);
}

TEST(RequestStats, JsonHasEveryContractKey) {
  RequestStats stats;
  for (int i = 0; i < 4; ++i) stats.on_arrival();
  stats.on_finished(completed_record(true));
  stats.on_finished(completed_record(false));
  stats.on_finished(rejected_record(Reason::kDeadlineUnmeetable));
  stats.on_finished(rejected_record(Reason::kDeadlineUnmeetable));

  // Round-trip through text, as an outside tool reads it.
  const nlohmann::json json = nlohmann::json::parse(stats.to_json(10.0).dump());
  for (const char* key : {"arrived", "completed", "rejected", "failed", "cancelled"}) {
    ASSERT_TRUE(json.contains(key)) << key;
    EXPECT_TRUE(json[key].is_number_unsigned()) << key;
  }
  EXPECT_EQ(json["arrived"], 4);
  EXPECT_EQ(json["completed"], 2);
  EXPECT_EQ(json["rejected"], 2);
  EXPECT_EQ(json["failed"], 0);
  EXPECT_EQ(json["cancelled"], 0);
  ASSERT_TRUE(json.contains("slo_attainment"));
  EXPECT_DOUBLE_EQ(json["slo_attainment"].get<double>(), 0.25);
  ASSERT_TRUE(json.contains("goodput_rps"));
  EXPECT_DOUBLE_EQ(json["goodput_rps"].get<double>(), 0.1);
  for (const char* histogram : {"queue_ms", "ttft_ms", "tpot_ms", "e2e_ms"}) {
    ASSERT_TRUE(json.contains(histogram)) << histogram;
    for (const char* field : {"mean", "p50", "p90", "p99", "max", "count"}) {
      ASSERT_TRUE(json[histogram].contains(field)) << histogram << "." << field;
      EXPECT_TRUE(json[histogram][field].is_number()) << histogram << "." << field;
    }
  }
  EXPECT_NEAR(json["ttft_ms"]["p50"].get<double>(), 50.0, 0.5);
  EXPECT_DOUBLE_EQ(json["e2e_ms"]["max"].get<double>(), 150.0);
  EXPECT_EQ(json["slo_met"], 1);
  EXPECT_EQ(json["reasons"], nlohmann::json({{"deadline_unmeetable", 2}}));
  for (const char* key : {"prompt_tokens", "output_tokens", "cached_prompt_tokens"}) {
    EXPECT_TRUE(json[key].is_number_unsigned()) << key;
  }
  EXPECT_TRUE(json["prefix_hit_rate"].is_number());
}

TEST(RequestStats, CountsFirstTokensOnTimeApartFromTheWholeSlo) {
  RequestStats stats;
  for (int i = 0; i < 4; ++i) stats.on_arrival();
  RequestRecord slow_decode = completed_record(false);  // first token on time, TPOT late
  slow_decode.ttft_met = true;
  RequestRecord on_time = completed_record(true);
  on_time.ttft_met = true;
  RequestRecord rejected = rejected_record(Reason::kDeadlineUnmeetable);
  rejected.ttft_met = true;  // a request that did not complete never counts, whatever its flag
  stats.on_finished(slow_decode);
  stats.on_finished(on_time);
  stats.on_finished(completed_record(false));
  stats.on_finished(rejected);

  EXPECT_EQ(stats.ttft_met(), 2u);
  EXPECT_EQ(stats.slo_met(), 1u);
  const nlohmann::json json = nlohmann::json::parse(stats.to_json(10.0).dump());
  EXPECT_EQ(json["ttft_met"], 2);
  EXPECT_DOUBLE_EQ(json["ttft_attainment"].get<double>(), 0.5);
  RequestStats merged;
  merged.merge(stats);
  merged.merge(stats);
  EXPECT_EQ(merged.ttft_met(), 4u);
  EXPECT_TRUE(RequestStats().to_json(1.0)["ttft_attainment"].is_null());
}

// P(SLO met | admitted): the promises admission made and kept. Rejections at arrival and
// downgrades were no promise in the class named; a request accepted and then shed from its queue
// or completed late was one, broken.
TEST(RequestStats, CountsPromisesKeptAmongAdmittedRequests) {
  RequestStats stats;
  for (int i = 0; i < 6; ++i) stats.on_arrival();
  stats.on_finished(completed_record(true));
  stats.on_finished(completed_record(false));
  stats.on_finished(rejected_record(Reason::kDeadlineUnmeetable));
  RequestRecord shed_later = rejected_record(Reason::kShed);
  shed_later.finished = at_ms(300);
  stats.on_finished(shed_later);
  RequestRecord downgraded = completed_record(true);
  downgraded.downgraded_to = SloClassId(2);
  stats.on_finished(downgraded);
  stats.on_finished(rejected_record(Reason::kQueueFull));

  EXPECT_EQ(stats.admitted(), 3u);
  EXPECT_EQ(stats.admitted_slo_met(), 1u);
  EXPECT_EQ(stats.slo_met(), 2u);
  EXPECT_DOUBLE_EQ(stats.slo_attainment_admitted(), 1.0 / 3.0);
  const nlohmann::json json = nlohmann::json::parse(stats.to_json(10.0).dump());
  EXPECT_EQ(json["admitted"], 3);
  EXPECT_EQ(json["admitted_slo_met"], 1);
  EXPECT_DOUBLE_EQ(json["slo_attainment_admitted"].get<double>(), 1.0 / 3.0);
  RequestStats merged;
  merged.merge(stats);
  merged.merge(stats);
  EXPECT_EQ(merged.admitted(), 6u);
  EXPECT_EQ(merged.admitted_slo_met(), 2u);
  EXPECT_TRUE(RequestStats().to_json(1.0)["slo_attainment_admitted"].is_null());
}

// The admitted requests that missed, by cause: a late first token, a decode too slow for the
// TPOT target after a first token on time, or an end without completing (shed after admission).
TEST(RequestStats, CountsBrokenPromisesByCause) {
  RequestStats stats;
  RequestRecord late = completed_record(false);
  RequestRecord slow = completed_record(false);
  slow.ttft_met = true;
  RequestRecord kept = completed_record(true);
  kept.ttft_met = true;
  RequestRecord shed_later = rejected_record(Reason::kShed);
  shed_later.finished = at_ms(300);
  for (const RequestRecord& record :
       {late, slow, kept, shed_later, rejected_record(Reason::kDeadlineUnmeetable)}) {
    stats.on_arrival();
    stats.on_finished(record);
  }
  EXPECT_EQ(stats.admitted(), 4u);
  EXPECT_EQ(stats.promise_missed_ttft(), 1u);
  EXPECT_EQ(stats.promise_missed_tpot(), 1u);
  EXPECT_EQ(stats.promise_dropped(), 1u);
  EXPECT_EQ(stats.admitted() - stats.admitted_slo_met(),
            stats.promise_missed_ttft() + stats.promise_missed_tpot() + stats.promise_dropped());
  RequestStats merged;
  merged.merge(stats);
  merged.merge(stats);
  const nlohmann::json json = nlohmann::json::parse(merged.to_json(10.0).dump());
  EXPECT_EQ(json["promise_misses"]["ttft"], 2);
  EXPECT_EQ(json["promise_misses"]["tpot"], 2);
  EXPECT_EQ(json["promise_misses"]["dropped"], 2);
  EXPECT_EQ(json["promise_misses"]["dropped_reasons"]["shed"], 2);
  EXPECT_FALSE(json["promise_misses"]["dropped_reasons"].contains("deadline_unmeetable"));
}

TEST(RequestStats, EmptyGroupHasNullAttainmentAndZeroHistograms) {
  const RequestStats stats;
  const nlohmann::json json = nlohmann::json::parse(stats.to_json(60.0).dump());
  ASSERT_TRUE(json.contains("slo_attainment"));
  EXPECT_TRUE(json["slo_attainment"].is_null());
  EXPECT_TRUE(json["prefix_hit_rate"].is_null());
  EXPECT_EQ(json["goodput_rps"].get<double>(), 0.0);
  EXPECT_EQ(json["ttft_ms"]["p99"].get<double>(), 0.0);
  EXPECT_EQ(json["ttft_ms"]["count"], 0);
  EXPECT_TRUE(json["reasons"].is_object());
  EXPECT_TRUE(json["reasons"].empty());
}

TEST(RequestStats, GoodputIsNullWithoutSimulatedTime) {
  RequestStats stats;
  stats.on_arrival();
  stats.on_finished(completed_record(true));
  EXPECT_TRUE(stats.to_json(0.0)["goodput_rps"].is_null());
  EXPECT_EQ(stats.to_json(0.0)["slo_attainment"].get<double>(), 1.0);
}

TEST(RequestStats, ReasonCountCoversEveryReason) {
  // kReasonCount assumes kDriverStopped is the last Reason: to_string must know the last slot
  // and nothing past it.
  EXPECT_STRNE(to_string(static_cast<Reason>(kReasonCount - 1)), "?");
  EXPECT_STREQ(to_string(static_cast<Reason>(kReasonCount)), "?");
}

TEST(RequestStats, MergeAddsEverything) {
  RequestStats a;
  RequestStats b;
  a.on_arrival();
  a.on_finished(completed_record(true));
  b.on_arrival();
  b.on_arrival();
  b.on_finished(rejected_record(Reason::kShed));
  a.merge(b);
  EXPECT_EQ(a.arrived(), 3u);
  EXPECT_EQ(a.completed(), 1u);
  EXPECT_EQ(a.rejected(), 1u);
  EXPECT_EQ(a.count_with_reason(Reason::kShed), 1u);
  EXPECT_EQ(a.in_flight(), 1);
}

TEST(RequestStats, OnFinishedNeverAllocates) {
  RequestStats stats;
  const RequestRecord record = completed_record(true);
  const uint64_t allocations_before = testing::allocations_so_far();
  for (int i = 0; i < 100'000; ++i) {
    stats.on_arrival();
    stats.on_finished(record);
  }
  EXPECT_EQ(testing::allocations_so_far(), allocations_before);
}

}  // namespace
}  // namespace gangway
