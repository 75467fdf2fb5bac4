#include "cli/simulation_engines.h"

#include <chrono>

#include "config/request_level_setup.h"
#include "config/scenario_source.h"
#include "sim/request_level_simulator.h"

namespace gangway {

PolicyRun run_engines_policy(const Scenario& scenario, const PolicySpec& policy,
                             TimelineWriter* timeline, Duration series_bin) {
  const EnginesConfig& engines = scenario.server.engines;
  RequestLevelSimulationSpec spec;
  spec.engines = engine_descriptors(scenario.node, engines);
  spec.core = request_level_options(engines, scenario.scheduler, policy);
  spec.calls.pause = engines.simulated_pause_latency;
  spec.calls.resume = engines.simulated_resume_latency;
  const std::string mode = spec.core.lease ? "lease" : "exclusive";
  const auto engine_count = static_cast<int64_t>(spec.engines.size());
  std::unique_ptr<RequestSource> source = make_request_source(scenario);
  RequestLevelSimulator simulator(scenario.node, std::move(spec), *source,
                                  simulation_options(scenario, timeline, series_bin));
  const auto wall_start = std::chrono::steady_clock::now();
  SimulationResult result = simulator.run();
  const auto wall_end = std::chrono::steady_clock::now();
  PolicyRun run{policy,
                mode,
                "least_reserved_kv",
                std::move(result),
                {},
                std::chrono::duration<double>(wall_end - wall_start).count(),
                {},
                false,
                {},
                false,
                {},
                OverloadLadder(),
                std::nullopt};
  EngineRunReport report;
  report.tier_mode = mode;
  report.engines = engine_count;
  report.tier_switches = simulator.core().tier_switches();
  report.pauses = simulator.pauses();
  report.resumes = simulator.resumes();
  report.switch_latency_ms = to_ms(simulator.core().switch_latency());
  report.pause_latency_ms = to_ms(engines.simulated_pause_latency);
  report.resume_latency_ms = to_ms(engines.simulated_resume_latency);
  run.engines = report;
  return run;
}

}  // namespace gangway
