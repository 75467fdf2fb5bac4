// fcfs and easy-backfill keep one global order across the tiers, and compare requests by queue
// key, the order the queues themselves keep (arrival times, or least slack first), so the request
// that goes first in one order goes first in the other (SchedulerState::smallest_small_queue_key).
// Comparing by arrival time while each queue keeps the scheduler's slack order stalls: with a
// shared system prompt on the small models' standard stream, predicted-TTFT routing binds those
// requests to the replica caching their prefix, while interactive ones wait in the model's shared
// queue. A replica queue's head is then a standard request older than the large queue's head, so
// the gang is not wanted, and the request each GPU picks first, by queue key, is an interactive
// one newer than the large head, so fcfs does not admit it: nothing runs and nothing is due. A
// case of tests/sim/random_scenarios_test.cc.

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "config/scenario.h"
#include "scenario_runs.h"

namespace gangway {
namespace {

// The random trial's settings, kept exactly (rates, window, prefixes, ladder): the stall needs
// these arrivals, and without the fix fcfs stalls on seed 780. The other seeds and easy-backfill
// are there so that the test keeps exercising the mix if the arrivals ever change.
Scenario prefix_routed_mix(const std::string& policy, uint64_t seed) {
  Scenario scenario = peak_mixed_scenario();
  scenario.seed = seed;
  scenario.warmup = Duration(0);
  scenario.duration = std::chrono::nanoseconds(2486957334);
  scenario.drain_limit = std::chrono::seconds(300);
  set_tier_rates(scenario, 0.824063 * (1 - 0.352825) * kPeakSmallCapacityPerS + 0.5,
                 0.824063 * 0.352825 * kPeakLargeCapacityPerS + 0.2);
  for (StreamSpec& stream : scenario.streams) {
    if (stream.name == "sm-standard") stream.prefix = PrefixSpec{3, 516, 0.764829, ""};
    if (stream.name == "lm-interactive") stream.prefix = PrefixSpec{16, 32, 0.58704, "shared"};
    if (stream.name == "lm-batch") stream.prefix = PrefixSpec{2, 568, 0.944051, ""};
  }
  scenario.policy.name = policy;
  scenario.scheduler.routing = "predicted-ttft";
  scenario.scheduler.admission.enabled = true;
  scenario.scheduler.admission.queue_order = QueueOrder::kSlack;
  scenario.scheduler.admission.ladder.enter = {0, 0.48, 0.64, 0.85, 1.28, 1.79};
  scenario.scheduler.admission.ladder.leave_fraction = 0.81;
  scenario.scheduler.admission.ladder.dwell = std::chrono::milliseconds(483);
  return scenario;
}

TEST(Regression, ArrivalOrderPoliciesFollowTheQueuesOwnOrder) {
  for (const char* policy : {"fcfs", "easy-backfill"}) {
    for (uint64_t seed : {780, 781, 782}) {
      SCOPED_TRACE(std::string(policy) + " seed " + std::to_string(seed));
      // Test builds check after every event that live requests have an iteration in flight or a
      // wakeup due (Scheduler::check_progress): the stall threw there.
      const SimulationResult result = simulate_scenario(prefix_routed_mix(policy, seed));
      const RequestStats& total = result.metrics.total();
      EXPECT_GT(total.arrived(), 2000u);
      expect_no_request_stranded(result);
    }
  }
}

}  // namespace
}  // namespace gangway
