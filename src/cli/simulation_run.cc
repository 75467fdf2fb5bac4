#include "cli/simulation_run.h"

#include <chrono>

#include "config/scenario_source.h"
#include "sched/policy_registry.h"

namespace gangway {

PolicyRun run_policy(const Scenario& scenario, const PolicySpec& policy, TimelineWriter* timeline) {
  std::unique_ptr<RequestSource> source = make_request_source(scenario);
  SimulationOptions options;
  options.duration = scenario.duration;
  options.drain_limit = scenario.drain_limit;
  options.warmup = scenario.warmup;
  options.timeline = timeline;
  std::unique_ptr<GangPolicy> gang_policy = make_policy(policy);
  const std::string mode = to_string(gang_policy->mode());
  Simulator simulator(scenario.node, scenario.scheduler, std::move(gang_policy), nullptr, *source,
                      options);
  const auto wall_start = std::chrono::steady_clock::now();
  SimulationResult result = simulator.run();
  const auto wall_end = std::chrono::steady_clock::now();
  return PolicyRun{policy, mode, std::move(result),
                   std::chrono::duration<double>(wall_end - wall_start).count()};
}

}  // namespace gangway
