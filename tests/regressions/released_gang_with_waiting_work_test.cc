// An exclusive-mode gang phase stops admitting once a small request waits ahead of the large
// queue (fcfs's global arrival order), drains, and is released. When that small request has left
// the queue meanwhile (the ladder sheds queued batch requests at `shed_batch`) and no small work is
// left, nothing runs and no wakeup is due; a decision pass that leaves live work with nothing to
// run it runs again at once (Scheduler::decide), so the large model's queued requests are served
// instead of waiting for an arrival that never comes. A case of
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
  expect_no_request_stranded(result);
}

}  // namespace
}  // namespace gangway
