// The load report a router reads (docs/overload.md): queue depth per model and class, predicted
// wait, headroom, the gang's lease, the overload ladder; and the scheduler's admission decisions
// on a real state (rejected requests end at once with a reason and a Retry-After).
#include "sched/load_report.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "sched/policy_registry.h"
#include "sched/scheduler.h"

namespace gangway {
namespace {

RequestSpec request(uint64_t id, ModelId model, uint8_t slo_class, int prompt, Time arrival) {
  RequestSpec spec;
  spec.id = RequestId(id);
  spec.model = model;
  spec.slo_class = SloClassId(slo_class);
  spec.arrival = arrival;
  spec.prompt_tokens = prompt;
  spec.max_tokens = 16;
  return spec;
}

std::unique_ptr<Scheduler> make(SchedulerOptions options = {}) {
  PolicySpec spec;
  spec.name = "gangway";
  return std::make_unique<Scheduler>(default_node_spec(), options, make_policy(spec), nullptr);
}

TEST(LoadReport, IdleNodeHasHeadroomAndNoLease) {
  auto scheduler = make();
  const LoadReport report = compute_load_report(scheduler->state(), Time::zero());
  ASSERT_EQ(report.models.size(), 2u);
  for (const ModelLoad& load : report.models) {
    EXPECT_EQ(load.queued, 0);
    EXPECT_DOUBLE_EQ(load.predicted_wait_ms, 0.0);
    EXPECT_GT(load.headroom_rps, 0.0);
  }
  EXPECT_EQ(report.gang_phase, "off");
  EXPECT_FALSE(report.lease_start_s.has_value());
  EXPECT_EQ(report.overload_level, "normal");
  const nlohmann::json json = to_json(report);
  EXPECT_TRUE(json["models"]["llama-3-8b"].contains("headroom_rps"));
  EXPECT_TRUE(json["gang"].contains("lease_start_s"));
  EXPECT_EQ(json["overload"]["level"], "normal");
}

TEST(LoadReport, CarriesTheLaddersWeightShift) {
  auto scheduler = make();
  SchedulerState state = scheduler->state();
  EXPECT_DOUBLE_EQ(compute_load_report(state, Time::zero()).large_weight_factor, 1.0);
  state.overload.large_weight_factor = 2.0;
  const LoadReport report = compute_load_report(state, Time::zero());
  EXPECT_DOUBLE_EQ(report.large_weight_factor, 2.0);
  EXPECT_DOUBLE_EQ(to_json(report)["overload"]["large_weight_factor"].get<double>(), 2.0);
}

// A node whose admission takes everything, so that a queue builds.
std::unique_ptr<Scheduler> make_without_admission() {
  SchedulerOptions options;
  options.admission.enabled = false;
  options.admission.queue_cap = 100000;
  return make(options);
}

TEST(LoadReport, QueuedWorkRaisesTheWaitAndUsesUpTheHeadroom) {
  auto scheduler = make_without_admission();
  const Time now = Time::zero();
  for (uint64_t id = 1; id <= 4000; ++id) {
    scheduler->submit(request(id, ModelId(0), 2, 2000, now), now);
  }
  const LoadReport report = compute_load_report(scheduler->state(), now);
  const ModelLoad& small = report.models[0];
  EXPECT_GT(small.queued, 3000);
  EXPECT_EQ(small.classes[2].queued, small.queued);  // all batch
  EXPECT_GT(small.predicted_wait_ms, 200.0);
  EXPECT_DOUBLE_EQ(small.headroom_rps, 0.0);
}

TEST(LoadReport, ThePromisedWaitCountsOnlyTheClassesWithATarget) {
  // Batch work has no TTFT target and waits behind every class that has one: a long batch queue
  // delays no promise, so it raises the predicted wait but not the promised one.
  auto scheduler = make_without_admission();
  const Time now = Time::zero();
  for (uint64_t id = 1; id <= 2000; ++id) {
    scheduler->submit(request(id, ModelId(0), 2, 2000, now), now);
  }
  const ModelLoad batch_only = compute_load_report(scheduler->state(), now).models[0];
  EXPECT_GT(batch_only.predicted_wait_ms, 200.0);
  EXPECT_DOUBLE_EQ(batch_only.promised_wait_ms, 0.0);
  // Standard work (a 2 s target) queued behind it counts, prompt token for prompt token.
  for (uint64_t id = 2001; id <= 2400; ++id) {
    scheduler->submit(request(id, ModelId(0), 1, 2000, now), now);
  }
  const ModelLoad both = compute_load_report(scheduler->state(), now).models[0];
  EXPECT_GT(both.promised_wait_ms, 0.0);
  EXPECT_NEAR(both.promised_wait_ms / both.predicted_wait_ms,
              static_cast<double>(both.classes[1].queued) /
                  static_cast<double>(both.classes[1].queued + both.classes[2].queued),
              1e-9);
  EXPECT_DOUBLE_EQ(to_json(compute_load_report(scheduler->state(),
                                               now))["models"]["llama-3-8b"]["promised_wait_ms"]
                       .get<double>(),
                   both.promised_wait_ms);
}

TEST(LoadReport, ANodeThatTurnsArrivalsAwayShowsNoHeadroom) {
  // Interactive arrivals far beyond what 200 ms can clear: admission keeps the queue to what it
  // can serve and rejects the rest, so the queue alone would leave headroom; having turned
  // arrivals away, the node shows none, for a second.
  auto scheduler = make();
  const Time now = Time::zero();
  for (uint64_t id = 1; id <= 3000; ++id) {
    scheduler->submit(request(id, ModelId(0), 0, 2000, now), now);
  }
  ASSERT_GT(
      scheduler->admission().counters().decisions[static_cast<int>(Reason::kDeadlineUnmeetable)],
      0);
  EXPECT_DOUBLE_EQ(compute_load_report(scheduler->state(), now).models[0].headroom_rps, 0.0);
  const Time later = now + std::chrono::seconds(2);
  EXPECT_GT(compute_load_report(scheduler->state(), later).models[0].headroom_rps, 0.0);
}

TEST(SchedulerAdmission, RejectsAtOnceWithReasonAndRetryAfterWhenTheTargetCannotBeMet) {
  auto scheduler = make();
  const Time now = Time::zero();
  // Interactive work (200 ms target, rejected when predicted late) until admission itself turns
  // it away: the queues then hold about what 200 ms can clear, and the next one cannot be on
  // time.
  for (uint64_t id = 1; id <= 3000; ++id) {
    scheduler->submit(request(id, ModelId(0), 0, 2000, now), now);
  }
  scheduler->effects().clear();
  const SubmitResult result = scheduler->submit(request(9999, ModelId(0), 0, 2000, now), now);
  EXPECT_FALSE(result.accepted);
  ASSERT_EQ(scheduler->effects().finished.size(), 1u);
  const RequestRecord& record = scheduler->effects().finished[0];
  EXPECT_EQ(record.outcome, Outcome::kRejected);
  EXPECT_EQ(record.reason, Reason::kDeadlineUnmeetable);
  ASSERT_TRUE(record.retry_after.has_value());
  EXPECT_GE(*record.retry_after, std::chrono::milliseconds(100));
}

TEST(SchedulerAdmission, QueuedWorkOfLooserClassesDoesNotTurnAwayATighterOne) {
  auto scheduler = make();
  const Time now = Time::zero();
  // Batch work far beyond what 200 ms can clear: under least-slack order an interactive
  // arrival is served before all of it, so it is admitted.
  for (uint64_t id = 1; id <= 3000; ++id) {
    scheduler->submit(request(id, ModelId(0), 2, 2000, now), now);
  }
  scheduler->effects().clear();
  EXPECT_TRUE(scheduler->submit(request(9999, ModelId(0), 0, 500, now), now).accepted);
  EXPECT_EQ(
      scheduler->admission().counters().decisions[static_cast<int>(Reason::kDeadlineUnmeetable)],
      0);
  // Under arrival order the same interactive request waits behind the batch work: turned away.
  SchedulerOptions arrival_order;
  arrival_order.admission.queue_order = QueueOrder::kArrival;
  auto fifo = make(arrival_order);
  for (uint64_t id = 1; id <= 3000; ++id) fifo->submit(request(id, ModelId(0), 2, 2000, now), now);
  fifo->effects().clear();
  EXPECT_FALSE(fifo->submit(request(9999, ModelId(0), 0, 500, now), now).accepted);
  ASSERT_EQ(fifo->effects().finished.size(), 1u);
  EXPECT_EQ(fifo->effects().finished[0].reason, Reason::kDeadlineUnmeetable);
}

TEST(SchedulerAdmission, LostGpuRejectsTheLargeModelAndRestoresIt) {
  auto scheduler = make();
  Time now = Time::zero();
  scheduler->on_engine_failed(GpuId(5), now);
  scheduler->effects().clear();
  EXPECT_FALSE(scheduler->submit(request(1, ModelId(1), 0, 100, now), now).accepted);
  ASSERT_EQ(scheduler->effects().finished.size(), 1u);
  EXPECT_EQ(scheduler->effects().finished[0].reason, Reason::kNoCapacity);
  EXPECT_TRUE(retry_elsewhere(Reason::kNoCapacity));
  // Small models still run (on the other seven GPUs).
  EXPECT_TRUE(scheduler->submit(request(2, ModelId(0), 0, 100, now), now).accepted);
  now += std::chrono::seconds(1);
  scheduler->on_engine_restored(GpuId(5), now);
  EXPECT_TRUE(scheduler->submit(request(3, ModelId(1), 0, 100, now), now).accepted);
}

}  // namespace
}  // namespace gangway
