// At the overload ladder's `defer_batch` rung a batch request at the head of a queue waits while
// other classes' requests are queued. With the queue in arrival order those requests are behind
// it, so each would wait for the other and the large model would stall with its queue full and
// nothing running. A decision pass that leaves live work with nothing to run it runs again with
// deferral lifted (Scheduler::decide), so the run ends with nothing cancelled. A case of
// tests/sim/random_scenarios_test.cc.

#include <gtest/gtest.h>

#include <chrono>

#include "config/scenario.h"
#include "scenario_runs.h"

namespace gangway {
namespace {

TEST(Regression, DeferredBatchHeadDoesNotStallAnArrivalOrderQueue) {
  // The large model at 116 % of its capacity, so that the ladder climbs to `defer_batch` and
  // beyond.
  Scenario scenario = large_model_overload(515, std::chrono::milliseconds(2600), 1.16);
  scenario.policy.name = "gangway";
  scenario.policy.mode = ExecutionMode::kExclusive;
  scenario.scheduler.admission.enabled = true;
  scenario.scheduler.admission.queue_order = QueueOrder::kArrival;

  // Test builds check after every event that live requests have an iteration in flight or a
  // wakeup due (Scheduler::check_progress): the stall threw there.
  const SimulationResult result = simulate_scenario(scenario);
  const RequestStats& total = result.metrics.total();
  EXPECT_GT(total.arrived(), 250u);
  expect_no_request_stranded(result);
}

}  // namespace
}  // namespace gangway
