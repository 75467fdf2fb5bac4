#include "cli/simulation_run.h"

#include <chrono>

#include "cli/simulation_cluster.h"
#include "cli/simulation_engines.h"
#include "config/scenario_simulation.h"
#include "config/scenario_source.h"
#include "sched/policy_registry.h"

namespace gangway {

KvRunReport kv_report(const SchedulerState& state) {
  KvRunReport report;
  report.stats = state.kv_stats;
  for (const Replica& replica : state.replicas) {
    report.pools.push_back(KvRunReport::Pool{
        replica.gpu, replica.model, replica.kv.capacity_blocks(), replica.kv.evicted_blocks()});
  }
  if (state.large) {
    report.pools.push_back(KvRunReport::Pool{std::nullopt, state.large->model,
                                             state.large->kv.capacity_blocks(),
                                             state.large->kv.evicted_blocks()});
  }
  report.large_kv_fraction = state.large_kv_fraction;
  report.host_capacity_bytes = state.host.capacity_bytes();
  report.host_kept_blocks = state.host.kept_blocks();
  report.host_evicted_blocks = state.host.evicted_blocks();
  return report;
}

void read_scheduler_report(const Scheduler& scheduler, PolicyRun& run) {
  run.kv = kv_report(scheduler.state());
  run.prediction = scheduler.state().prediction_accuracy;
  run.backfill = scheduler.policy().backfill_stats();
  run.admission_enabled = scheduler.admission().enabled();
  run.admission = scheduler.admission().counters();
  run.ladder = scheduler.admission().ladder();
}

SimulationOptions simulation_options(const Scenario& scenario, TimelineWriter* timeline,
                                     Duration series_bin) {
  SimulationOptions options = simulation_options_of(scenario);
  options.timeline = timeline;
  options.series_bin = series_bin;
  return options;
}

SchedulerOptions run_scheduler_options(const Scenario& scenario, const std::string& routing) {
  SchedulerOptions scheduler = scenario.scheduler;
  scheduler.routing = routing;
  scheduler.statistics_from = Time::zero() + scenario.warmup;
  return scheduler;
}

PolicyRun run_policy(const Scenario& scenario, const PolicySpec& policy, const std::string& routing,
                     TimelineWriter* timeline, Duration series_bin) {
  if (scenario.cluster) {
    PolicyRun run = run_cluster_policy(scenario, policy, routing, series_bin);
    run.seed = scenario.seed;
    return run;
  }
  if (scenario.server.engines.real()) {
    PolicyRun run = run_engines_policy(scenario, policy, timeline, series_bin);
    run.seed = scenario.seed;
    return run;
  }
  std::unique_ptr<RequestSource> source = make_request_source(scenario);
  const SchedulerOptions scheduler = run_scheduler_options(scenario, routing);
  std::unique_ptr<GangPolicy> gang_policy = make_policy(policy);
  const std::string mode = to_string(gang_policy->mode());
  Simulator simulator(scenario.node, scheduler, std::move(gang_policy), nullptr, *source,
                      simulation_options(scenario, timeline, series_bin));
  const auto wall_start = std::chrono::steady_clock::now();
  SimulationResult result = simulator.run();
  const auto wall_end = std::chrono::steady_clock::now();
  PolicyRun run{policy,      mode,
                routing,     std::move(result),
                {},          std::chrono::duration<double>(wall_end - wall_start).count(),
                {},          false,
                {},          false,
                {},          OverloadLadder(),
                std::nullopt};
  run.oracle_output_lengths = scheduler.oracle_predictor;
  run.seed = scenario.seed;
  read_scheduler_report(simulator.scheduler(), run);
  return run;
}

}  // namespace gangway
