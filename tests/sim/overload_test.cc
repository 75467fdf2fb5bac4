// Overload and failure modes (docs/overload.md), in the simulator with invariants checked after
// every event:
//  - at 3x the peak scenario's load, admission control keeps interactive goodput near what the
//    node delivers at 1x, where the same policy without admission control collapses;
//  - faults (a lost GPU, overrunning iterations, a stalled engine), mixed at random across
//    seeds: nothing deadlocks and every request that arrived ends with exactly one outcome;
//  - a lost GPU: the large model's waiting and new requests are rejected at once with a
//    retry-elsewhere reason while small-model traffic continues, and the node recovers.

#include <gtest/gtest.h>

#include <array>
#include <string>

#include "config/scenario.h"
#include "config/scenario_source.h"
#include "scenario_runs.h"
#include "sched/policy_registry.h"
#include "sim/simulator.h"
#include "workload/rng.h"

namespace gangway {
namespace {

Scenario peak(double rate_scale, double duration_s) {
  return peak_mixed_scenario(std::chrono::seconds(2), seconds_to_duration(duration_s),
                             std::chrono::seconds(120), rate_scale);
}

SimulationResult simulate(const Scenario& scenario) {
  return simulate_scenario(scenario);
}

SloClassId class_named(const Scenario& scenario, const std::string& name) {
  return scenario.node.find_slo_class(name).value();
}

TEST(Overload, AdmissionHoldsInteractiveGoodputAtThreeTimesTheLoad) {
  const SimulationResult base = simulate(peak(1.0, 12));
  Scenario heavy = peak(3.0, 12);
  const SimulationResult with = simulate(heavy);
  heavy.scheduler.admission.enabled = false;
  const SimulationResult without = simulate(heavy);
  const SloClassId interactive = class_named(heavy, "interactive");
  const double measured_s = 10;
  auto goodput = [&](const SimulationResult& result) {
    return static_cast<double>(result.metrics.slo_class(interactive).slo_met()) / measured_s;
  };
  // The target: within 10 % of the 1x goodput (the 3x run offers three times as many
  // interactive requests, so it may well exceed it).
  EXPECT_GE(goodput(with), 0.9 * goodput(base));
  // Without admission the queues fill up to their caps and almost nothing is on time.
  EXPECT_LT(goodput(without), 0.5 * goodput(base));
  // Accepted interactive small-model requests keep their TTFT target at p99 (with slack for the
  // histogram's bucket width).
  const RequestStats& sm_interactive = with.metrics.model_class(ModelId(0), interactive);
  EXPECT_LE(sm_interactive.ttft_ms().quantile(0.99), 220.0);
  expect_every_request_ended_once(with);
  expect_every_request_ended_once(without);
}

// The ladder's weight shift (docs/overload.md): at 3x load the large model's interactive
// requests, squeezed to a few percent on time with the configured weights, get a much larger
// share on time with the shift on, and interactive goodput still holds the 3x target above.
TEST(Overload, WeightShiftGivesTheSqueezedLargeModelItsInteractiveRequestsBack) {
  const SimulationResult base = simulate(peak(1.0, 12));
  Scenario heavy = peak(3.0, 12);
  const SimulationResult off = simulate(heavy);
  heavy.scheduler.admission.weight_shift.enabled = true;
  const SimulationResult on = simulate(heavy);
  const SloClassId interactive = class_named(heavy, "interactive");
  auto on_time = [&](const SimulationResult& result) {
    const RequestStats& large = result.metrics.model_class(ModelId(1), interactive);
    return static_cast<double>(large.slo_met()) / static_cast<double>(large.arrived());
  };
  EXPECT_LT(on_time(off), 0.1);
  EXPECT_GT(on_time(on), on_time(off) + 0.2);
  const double measured_s = 10;
  auto goodput = [&](const SimulationResult& result) {
    return static_cast<double>(result.metrics.slo_class(interactive).slo_met()) / measured_s;
  };
  EXPECT_GE(goodput(on), 0.9 * goodput(base));
  expect_every_request_ended_once(on);
}

// The target at 85 % load: >= 99 % of the interactive requests that arrived get their
// first token within 200 ms, small and large model apart (a rejection counts as a miss). TTFT
// alone: the large model's TPOT is reported beside it (docs/overload.md), not part of this target.
// Pooled over three seeds of 20 s: one 20 s window holds ~350 large-model interactive requests,
// and single windows range from 98.8 to 100 % (docs/results/overload.md, over ten seeds).
TEST(Overload, AtEightyFivePercentLoadInteractiveRequestsOfBothTiersGetTheirFirstTokenOnTime) {
  std::array<uint64_t, 2> arrived{};
  std::array<uint64_t, 2> on_time{};
  for (const uint64_t seed : {42u, 4u, 5u}) {
    Scenario scenario = peak(1.0, 22);
    scenario.seed = seed;
    const SimulationResult result = simulate(scenario);
    const SloClassId interactive = class_named(scenario, "interactive");
    for (const ModelId model : {ModelId(0), ModelId(1)}) {
      const RequestStats& stats = result.metrics.model_class(model, interactive);
      arrived[model.value()] += stats.arrived();
      on_time[model.value()] += stats.ttft_met();
    }
    expect_every_request_ended_once(result);
  }
  for (const int model : {0, 1}) {
    ASSERT_GT(arrived[model], 0u);
    EXPECT_GE(static_cast<double>(on_time[model]) / static_cast<double>(arrived[model]), 0.99)
        << "model " << model << ": " << on_time[model] << " of " << arrived[model] << " on time";
  }
}

// admission.keep_promises at 3x the peak load (docs/overload.md, "Promise accuracy"): no request
// admitted in a class with a target is dropped after admission (by default the ladder sheds
// queued standard requests it admitted moments before), and the standard class, whose requests
// by default are admitted and then shed or served late, is turned away at arrival instead: at
// most one in a hundred of those admitted misses; and at least 95 % of the small models'
// interactive arrivals still meet their SLO.
TEST(Overload, KeptPromisesAreNotShedAfterAdmissionAtThreeTimesTheLoad) {
  Scenario heavy = peak(3.0, 12);
  const SimulationResult by_default = simulate(heavy);
  heavy.scheduler.admission.keep_promises = true;
  const SimulationResult kept = simulate(heavy);
  const SloClassId standard = class_named(heavy, "standard");
  uint64_t dropped_by_default = 0;
  std::array<uint64_t, 2> standard_admitted{};
  std::array<uint64_t, 2> standard_broken{};
  for (const SloClass& slo : heavy.node.slo_classes) {
    if (!slo.ttft_target) continue;
    for (const ModelId model : {ModelId(0), ModelId(1)}) {
      const RequestStats& before = by_default.metrics.model_class(model, slo.id);
      const RequestStats& after = kept.metrics.model_class(model, slo.id);
      dropped_by_default += before.promise_dropped();
      EXPECT_EQ(after.promise_dropped(), 0u) << "model " << model.value() << " class " << slo.name;
      if (slo.id != standard) continue;
      standard_admitted[0] += before.admitted();
      standard_broken[0] += before.admitted() - before.admitted_slo_met();
      standard_admitted[1] += after.admitted();
      standard_broken[1] += after.admitted() - after.admitted_slo_met();
    }
  }
  EXPECT_GT(dropped_by_default, 0u);
  EXPECT_GT(standard_broken[0], standard_admitted[0] / 2);
  EXPECT_LE(standard_broken[1], standard_admitted[1] / 100);
  // The small models' interactive requests are not the price of the others' kept promises: with
  // the gang's leases counted in their waits (the lease calendar) at least 95 % of their
  // arrivals meet their SLO; predicted with the gang's mean share instead, about three quarters
  // do at this load.
  const RequestStats& small_interactive =
      kept.metrics.model_class(ModelId(0), class_named(heavy, "interactive"));
  ASSERT_GT(small_interactive.arrived(), 0u);
  EXPECT_GE(static_cast<double>(small_interactive.slo_met()) /
                static_cast<double>(small_interactive.arrived()),
            0.95);
  expect_every_request_ended_once(kept);
}

TEST(Faults, LostGpuRejectsLargeModelWorkAndSmallModelsCarryOn) {
  Scenario scenario = peak(1.0, 10);
  FaultSpec loss;
  loss.kind = FaultKind::kGpuLoss;
  loss.gpu = GpuId(3);
  loss.at = Time::zero() + std::chrono::seconds(4);
  loss.duration = std::chrono::seconds(3);
  scenario.faults.push_back(loss);
  const SimulationResult result = simulate(scenario);
  expect_every_request_ended_once(result);
  const RequestStats& large = result.metrics.model(ModelId(1));
  const RequestStats& small = result.metrics.model(ModelId(0));
  // Three seconds without the gang: the large model's arrivals then are turned away...
  EXPECT_GT(large.rejected(), 50u);
  // ... but before and after it served (the node recovered): 3 of the 8 measured seconds were
  // lost, and the first lease after recovery waits for the gang's barrier.
  EXPECT_GT(large.completed(), large.arrived() / 3);
  // Small models lost only what was resident on GPU 3 at the moment of failure.
  EXPECT_GT(small.completed(), small.arrived() * 95 / 100);
  EXPECT_LE(small.failed(), 300u);
}

TEST(Faults, RandomFaultMixesNeverDeadlockAndEveryRequestEndsOnce) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Scenario scenario = peak(0.5 + 0.5 * static_cast<double>(seed % 3), 6);
    scenario.seed = seed;
    scenario.warmup = Duration(0);
    Rng rng(seed * 7919);
    for (int i = 0; i < 4; ++i)
      scenario.faults.push_back(random_fault(rng, std::chrono::seconds(6)));
    const SimulationResult result = simulate(scenario);
    expect_every_request_ended_once(result);
  }
}

}  // namespace
}  // namespace gangway
