// Regression: an exclusive-mode gang phase stops admitting once a small request waits ahead of
// the large queue (fcfs's global arrival order), drains, and is released. When that small
// request had left the queue meanwhile (the ladder sheds queued batch requests at `shed_batch`)
// and no small work was left, nothing ran, no wakeup was due, and the large model's 94 queued
// requests waited for an arrival that never came. A decision pass that leaves live work with
// nothing to run it now runs again at once (Scheduler::decide). Found by
// tests/sim/random_scenarios_test.cc.

#include <gtest/gtest.h>

#include <chrono>

#include "config/scenario.h"
#include "scenario_runs.h"

namespace gangway {
namespace {

TEST(Regression, ReleasedGangPhaseDoesNotLeaveWaitingLargeWorkStranded) {
  // The large model at 160 % of its capacity beside a trickle of small requests: the ladder
  // sheds the small batch request that made the phase stop admitting.
  Scenario scenario = large_model_overload(660, std::chrono::milliseconds(3000), 1.6);
  scenario.policy.name = "fcfs";
  scenario.scheduler.admission.enabled = true;

  const SimulationResult result = simulate_scenario(scenario);
  const RequestStats& total = result.metrics.total();
  EXPECT_GT(total.arrived(), 400u);
  EXPECT_EQ(total.cancelled(), 0u);
  expect_every_request_ended_once(result);
}

}  // namespace
}  // namespace gangway
