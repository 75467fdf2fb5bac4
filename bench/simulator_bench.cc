// Simulator throughput on the default peak scenario (examples/peak-mixed.yaml): events per
// wall-clock second and simulated seconds per wall second. The target: one simulated
// hour of peak mixed load in under 60 s on one core (aim for 12 s, 300x real time).

#include <benchmark/benchmark.h>

#include <string>

#include "config/scenario.h"
#include "config/scenario_source.h"
#include "sched/policy_registry.h"
#include "sim/simulator.h"

namespace gangway {
namespace {

void BM_PeakScenario(benchmark::State& state) {
  Scenario scenario = load_scenario(std::string(GANGWAY_SOURCE_DIR) + "/examples/peak-mixed.yaml");
  scenario.duration = std::chrono::seconds(state.range(0));
  scenario.warmup = Duration(0);
  int64_t events = 0;
  double simulated_s = 0;
  for (auto _ : state) {
    std::unique_ptr<RequestSource> source = make_request_source(scenario);
    SimulationOptions options;
    options.duration = scenario.duration;
    options.drain_limit = scenario.drain_limit;
    Simulator simulator(scenario.node, scenario.scheduler, make_policy(scenario.policy), nullptr,
                        *source, options);
    const SimulationResult result = simulator.run();
    events += result.events;
    simulated_s += result.simulated_s;
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["simulated_s_per_wall_s"] =
      benchmark::Counter(simulated_s, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PeakScenario)->Arg(60)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace gangway
