// The fluid upper bound on goodput (sim/fluid_bound.h): never above what was offered, never
// below what a simulated scheduler achieved on the same arrivals, and blind to requests whose own
// prefill cannot meet their TTFT target.

#include "sim/fluid_bound.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "config/scenario.h"
#include "config/scenario_source.h"
#include "scenario_runs.h"
#include "sim/simulator.h"
#include "workload/request_source.h"

namespace gangway {
namespace {

Scenario light_peak_scenario() {
  Scenario scenario = peak_mixed_scenario(std::chrono::seconds(1), std::chrono::seconds(4),
                                          std::chrono::seconds(30));
  set_tier_rates(scenario, 0.3 * 0.5 * 1527, 0.3 * 0.5 * 103);
  return scenario;
}

FluidBound bound_of(const Scenario& scenario) {
  const std::unique_ptr<RequestSource> source = make_request_source(scenario);
  return compute_fluid_bound(scenario.node, *source, Time() + scenario.warmup,
                             Time() + scenario.duration);
}

TEST(FluidBound, LiesBetweenWhatSchedulersAchieveAndWhatWasOffered) {
  const Scenario scenario = light_peak_scenario();
  const FluidBound bound = bound_of(scenario);
  EXPECT_DOUBLE_EQ(bound.window_s, 3.0);
  ASSERT_GT(bound.offered_rps, 100.0);
  EXPECT_LE(bound.goodput_rps, bound.feasible_rps + 1e-9);
  EXPECT_LE(bound.feasible_rps, bound.offered_rps + 1e-9);
  EXPECT_GE(bound.large_share, 0.0);
  EXPECT_LE(bound.large_share, 1.0);
  double by_model = 0;
  for (double rps : bound.model_goodput_rps) by_model += rps;
  EXPECT_LE(by_model, bound.goodput_rps + 1e-9);
  for (const std::string name : {"gangway-lease", "time-slice"}) {
    Scenario with = scenario;
    with.policy.name = name;
    const std::unique_ptr<RequestSource> source = make_request_source(with);
    const SimulationResult result = simulate_scenario(with, *source);
    const double goodput =
        static_cast<double>(result.metrics.total().slo_met()) / result.measured_s;
    EXPECT_GT(goodput, 0.5 * bound.offered_rps) << name;
    EXPECT_LE(goodput, bound.goodput_rps) << name;
  }
}

TEST(FluidBound, CountsNoRequestWhosePrefillAloneIsLate) {
  Scenario scenario = light_peak_scenario();
  // A TTFT target of 1 ms: no prompt's prefill fits, so nothing can be on time.
  for (SloClass& slo : scenario.node.slo_classes) slo.ttft_target = std::chrono::milliseconds(1);
  const FluidBound bound = bound_of(scenario);
  EXPECT_GT(bound.offered_rps, 100.0);
  EXPECT_DOUBLE_EQ(bound.feasible_rps, 0.0);
  EXPECT_DOUBLE_EQ(bound.goodput_rps, 0.0);
}

TEST(FluidBound, AnEmptyWindowBoundsNothing) {
  const Scenario scenario = light_peak_scenario();
  const std::unique_ptr<RequestSource> source = make_request_source(scenario);
  const FluidBound bound = compute_fluid_bound(scenario.node, *source, Time() + scenario.warmup,
                                               Time() + scenario.warmup);
  EXPECT_DOUBLE_EQ(bound.goodput_rps, 0.0);
  EXPECT_DOUBLE_EQ(bound.offered_rps, 0.0);
}

}  // namespace
}  // namespace gangway
