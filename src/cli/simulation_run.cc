#include "cli/simulation_run.h"

#include <chrono>

#include "config/scenario_source.h"
#include "sched/policy_registry.h"

namespace gangway {

namespace {

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

}  // namespace

PolicyRun run_policy(const Scenario& scenario, const PolicySpec& policy, const std::string& routing,
                     TimelineWriter* timeline) {
  std::unique_ptr<RequestSource> source = make_request_source(scenario);
  SimulationOptions options;
  options.duration = scenario.duration;
  options.drain_limit = scenario.drain_limit;
  options.warmup = scenario.warmup;
  options.timeline = timeline;
  options.faults = scenario.faults;
  SchedulerOptions scheduler = scenario.scheduler;
  scheduler.routing = routing;
  scheduler.statistics_from = Time::zero() + scenario.warmup;
  std::unique_ptr<GangPolicy> gang_policy = make_policy(policy);
  const std::string mode = to_string(gang_policy->mode());
  Simulator simulator(scenario.node, scheduler, std::move(gang_policy), nullptr, *source, options);
  const auto wall_start = std::chrono::steady_clock::now();
  SimulationResult result = simulator.run();
  const auto wall_end = std::chrono::steady_clock::now();
  PolicyRun run{policy,
                mode,
                routing,
                std::move(result),
                kv_report(simulator.scheduler().state()),
                std::chrono::duration<double>(wall_end - wall_start).count(),
                {},
                false,
                {},
                false,
                {},
                OverloadLadder()};
  run.prediction = simulator.scheduler().state().prediction_accuracy;
  run.oracle_output_lengths = scheduler.oracle_predictor;
  run.backfill = simulator.scheduler().policy().backfill_stats();
  run.admission_enabled = simulator.scheduler().admission().enabled();
  run.admission = simulator.scheduler().admission().counters();
  run.ladder = simulator.scheduler().admission().ladder();
  return run;
}

}  // namespace gangway
