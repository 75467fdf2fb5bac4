// The overload ladder steps down when arrivals stop. Arrivals are its pressure samples (each one's
// predicted wait); a pressure with no fresh sample counts as zero, and the ladder steps down
// without arrivals (AdmissionController::refresh_pressure) at wakeups asked for when it can.
// Otherwise, at `defer_batch`, a batch request at the head of an arrival-ordered queue waits for
// the requests of other classes queued behind it for good, while the gang policy's own wakeups
// (the gang wanted, started with nothing it can admit, released every 26 ms) keep the pass that
// lifts deferral from running, until the simulator's drain limit cancels what is left. A case of
// tests/sim/random_scenarios_test.cc.

#include <gtest/gtest.h>

#include <chrono>

#include "config/scenario.h"
#include "scenario_runs.h"

namespace gangway {
namespace {

TEST(Regression, LadderStepsDownOnceArrivalsStop) {
  // The large model at 130 % of its capacity: the ladder climbs and is still up when arrivals
  // stop at 3 s.
  for (uint64_t seed : {118, 119, 120}) {
    SCOPED_TRACE(seed);
    Scenario scenario = large_model_overload(seed, std::chrono::milliseconds(3000), 1.3);
    scenario.policy.name = "gangway";
    scenario.scheduler.admission.enabled = true;
    scenario.scheduler.admission.queue_order = QueueOrder::kArrival;

    std::unique_ptr<RequestSource> source = make_request_source(scenario);
    Simulator simulator(scenario.node, scenario.scheduler, make_policy(scenario.policy), nullptr,
                        *source, simulation_options_of(scenario));
    const SimulationResult result = simulator.run();
    const OverloadLadder& ladder = simulator.scheduler().admission().ladder();
    EXPECT_GT(ladder.entered(OverloadLevel::kShedBatch), 0);
    EXPECT_EQ(ladder.level(), OverloadLevel::kNormal);
    expect_no_request_stranded(result);
  }
}

}  // namespace
}  // namespace gangway
