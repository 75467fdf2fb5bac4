#include "metrics/run_metrics.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "metrics/allocation_count_for_tests.h"

namespace gangway {
namespace {

constexpr ModelId kSmall{0};
constexpr ModelId kLarge{1};
constexpr SloClassId kInteractive{0};
constexpr SloClassId kBatch{1};

RunMetrics make_metrics() {
  return RunMetrics({"interactive", "batch"}, {"llama-8b", "llama-70b"});
}

RequestRecord finished(ModelId model, SloClassId slo_class, Outcome outcome, bool slo_met) {
  RequestRecord record;
  record.model = model;
  record.slo_class = slo_class;
  record.outcome = outcome;
  record.reason = outcome == Outcome::kCompleted ? Reason::kNone : Reason::kQueueFull;
  record.arrival = Time::zero();
  record.first_scheduled = Time::zero() + ms_to_duration(5);
  record.first_token = Time::zero() + ms_to_duration(20);
  record.finished = Time::zero() + ms_to_duration(100);
  record.output_tokens = 9;
  record.slo_met = slo_met;
  if (outcome == Outcome::kRejected) {
    record.first_scheduled.reset();
    record.first_token.reset();
    record.output_tokens = 0;
  }
  return record;
}

TEST(RunMetrics, RoutesToClassModelAndTotal) {
  RunMetrics metrics = make_metrics();
  metrics.on_arrival(kSmall, kInteractive);
  metrics.on_arrival(kSmall, kBatch);
  metrics.on_arrival(kLarge, kInteractive);
  EXPECT_EQ(metrics.in_flight(), 3);

  metrics.on_finished(finished(kSmall, kInteractive, Outcome::kCompleted, true));
  metrics.on_finished(finished(kSmall, kBatch, Outcome::kRejected, false));
  EXPECT_EQ(metrics.in_flight(), 1);
  metrics.on_finished(finished(kLarge, kInteractive, Outcome::kCompleted, false));

  EXPECT_EQ(metrics.arrivals(), 3u);
  EXPECT_EQ(metrics.finished(), 3u);
  EXPECT_EQ(metrics.in_flight(), 0);
  EXPECT_EQ(metrics.slo_class(kInteractive).arrived(), 2u);
  EXPECT_EQ(metrics.slo_class(kInteractive).completed(), 2u);
  EXPECT_EQ(metrics.slo_class(kInteractive).slo_met(), 1u);
  EXPECT_EQ(metrics.slo_class(kBatch).rejected(), 1u);
  EXPECT_EQ(metrics.model(kSmall).arrived(), 2u);
  EXPECT_EQ(metrics.model(kSmall).completed(), 1u);
  EXPECT_EQ(metrics.model(kSmall).rejected(), 1u);
  EXPECT_EQ(metrics.model(kLarge).completed(), 1u);
  EXPECT_EQ(metrics.model(kLarge).slo_met(), 0u);
  EXPECT_EQ(metrics.total().completed(), 2u);
  EXPECT_EQ(metrics.total().rejected(), 1u);
  EXPECT_EQ(metrics.total().slo_met(), 1u);
}

TEST(RunMetrics, JsonIsKeyedByNames) {
  RunMetrics metrics = make_metrics();
  metrics.on_arrival(kLarge, kBatch);
  metrics.on_finished(finished(kLarge, kBatch, Outcome::kCompleted, true));

  const nlohmann::json classes = nlohmann::json::parse(metrics.classes_json(2.0).dump());
  ASSERT_TRUE(classes.contains("interactive"));
  ASSERT_TRUE(classes.contains("batch"));
  EXPECT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes["batch"]["completed"], 1);
  EXPECT_DOUBLE_EQ(classes["batch"]["goodput_rps"].get<double>(), 0.5);
  EXPECT_TRUE(classes["interactive"]["slo_attainment"].is_null());  // nothing arrived there

  const nlohmann::json models = metrics.models_json(2.0);
  ASSERT_TRUE(models.contains("llama-8b"));
  ASSERT_TRUE(models.contains("llama-70b"));
  EXPECT_EQ(models["llama-70b"]["arrived"], 1);
  EXPECT_EQ(models["llama-8b"]["arrived"], 0);

  EXPECT_EQ(metrics.total_json(2.0), metrics.total().to_json(2.0));
  EXPECT_DOUBLE_EQ(metrics.total_json(2.0)["slo_attainment"].get<double>(), 1.0);
}

TEST(RunMetrics, UnknownIdsThrowAndCountNothing) {
  RunMetrics metrics = make_metrics();
  EXPECT_THROW(metrics.on_arrival(ModelId(2), kInteractive), std::out_of_range);
  EXPECT_THROW(metrics.on_arrival(kSmall, SloClassId(7)), std::out_of_range);
  EXPECT_THROW(metrics.on_finished(finished(ModelId(9), kBatch, Outcome::kCompleted, true)),
               std::out_of_range);
  EXPECT_THROW(static_cast<void>(metrics.model(ModelId(2))), std::out_of_range);
  EXPECT_EQ(metrics.arrivals(), 0u);
  EXPECT_EQ(metrics.slo_class(kInteractive).arrived(), 0u);
}

TEST(RunMetrics, DuplicateNamesAreRejected) {
  EXPECT_THROW(RunMetrics({"a", "a"}, {"m"}), std::invalid_argument);
  EXPECT_THROW(RunMetrics({"a"}, {"m", "m"}), std::invalid_argument);
}

#ifdef GANGWAY_CHECK_INVARIANTS
TEST(RunMetrics, FinishingARequestThatNeverArrivedIsCaught) {
  RunMetrics metrics = make_metrics();
  metrics.on_arrival(kSmall, kInteractive);
  // Same class, other model: the model group has nothing in flight.
  EXPECT_THROW(metrics.on_finished(finished(kLarge, kInteractive, Outcome::kCompleted, true)),
               std::logic_error);
  metrics.on_finished(finished(kSmall, kInteractive, Outcome::kCompleted, true));
  EXPECT_THROW(metrics.on_finished(finished(kSmall, kInteractive, Outcome::kCompleted, true)),
               std::logic_error);
  EXPECT_EQ(metrics.in_flight(), 0);
}
#endif

TEST(RunMetrics, PerRequestCallsNeverAllocate) {
  RunMetrics metrics = make_metrics();
  const RequestRecord record = finished(kSmall, kBatch, Outcome::kCompleted, true);
  const uint64_t allocations_before = testing::allocations_so_far();
  for (int i = 0; i < 100'000; ++i) {
    metrics.on_arrival(kSmall, kBatch);
    metrics.on_finished(record);
  }
  EXPECT_EQ(testing::allocations_so_far(), allocations_before);
  EXPECT_EQ(metrics.in_flight(), 0);
}

}  // namespace
}  // namespace gangway
