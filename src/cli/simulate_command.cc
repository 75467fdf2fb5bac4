#include "cli/simulate_command.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/bound_report.h"
#include "cli/simulation_report.h"
#include "cli/simulation_run.h"
#include "core/input_error.h"
#include "sched/policy_registry.h"
#include "sched/router_registry.h"

namespace gangway {

namespace {

// Applies the command line's overrides to the scenario; throws InputError for bad values.
void apply_simulate_overrides(const SimulateOptions& options, Scenario& scenario) {
  apply_workload_overrides(options, scenario);
  if (options.drain_s) {
    if (!(*options.drain_s >= 0)) {
      throw InputError::at("", std::nullopt, "--drain", "expected seconds >= 0");
    }
    scenario.drain_limit = seconds_to_duration(*options.drain_s);
  }
  if (options.no_admission) scenario.scheduler.admission.enabled = false;
}

std::vector<PolicySpec> policies_to_run(const SimulateOptions& options, const Scenario& scenario) {
  if (options.policies.empty()) return {scenario.policy};
  std::vector<PolicySpec> specs;
  for (const std::string& name : options.policies) {
    PolicySpec spec = scenario.policy;  // the scenario's parameters apply to any policy
    spec.name = name;
    validate_policy_spec(spec);
    specs.push_back(spec);
  }
  return specs;
}

std::vector<std::string> routings_to_run(const SimulateOptions& options, const Scenario& scenario) {
  if (options.routings.empty()) return {scenario.scheduler.routing};
  for (const std::string& name : options.routings) {
    if (!is_router_name(name)) {
      std::string known;
      for (const std::string& n : router_names()) known += (known.empty() ? "" : ", ") + n;
      throw InputError::at("", std::nullopt, "--routing",
                           "unknown routing rule '" + name + "'; expected one of: " + known);
    }
  }
  return options.routings;
}

// With several runs, each gets its own timeline file: "run.json" -> "run.fcfs.json".
std::string timeline_path_for(const std::string& path, const std::string& policy, bool several) {
  if (!several) return path;
  const size_t dot = path.find_last_of('.');
  const size_t slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    return path + "." + policy;
  }
  return path.substr(0, dot) + "." + policy + path.substr(dot);
}

}  // namespace

CLI::App* add_simulate_command(CLI::App& app, SimulateOptions& options) {
  CLI::App* command = app.add_subcommand(
      "simulate", "Run a scenario in the deterministic simulator and compare gang policies");
  command
      ->add_option("scenario", options.scenario_path, "Scenario YAML file (see docs/scenario.md)")
      ->required();
  command->add_option("--policy", options.policies,
                      "Gang policy to run; repeat to compare several on the same arrivals "
                      "(default: the scenario's policy)");
  command->add_option("--routing", options.routings,
                      "Small-model routing rule (predicted-ttft, late-binding, round-robin, "
                      "least-loaded, cache-only, sglang); repeat to compare several, each under "
                      "every --policy (default: the scenario's scheduler.routing)");
  command->add_option("--seed", options.seed, "Override the scenario's seed");
  command->add_option("--duration", options.duration_s, "Override the arrival window, in seconds");
  command->add_option("--drain", options.drain_s,
                      "Override how long work in flight may run after the window, in seconds");
  command->add_option("--rate-scale", options.rate_scale,
                      "Multiply every arrival rate (trace replay: compress time) by this factor");
  command->add_option("--trace", options.trace_path,
                      "Replay this trace instead of the scenario's workload, mapped to models and "
                      "classes by the scenario's trace_mapping");
  command->add_option("--trace-format", options.trace_format,
                      "Trace format: azure, mooncake or burstgpt (default: mooncake for .jsonl, "
                      "else azure)");
  command->add_flag("--json", options.json, "Print exactly one JSON document on stdout");
  command->add_flag("--no-admission", options.no_admission,
                    "Turn admission control off (no TTFT-based rejection, no overload ladder; "
                    "rate limits and queue caps still hold)");
  command->add_flag("--bound", options.bound,
                    "Add the fluid upper bound on goodput over the measured arrivals and each "
                    "run's distance to it (JSON: \"bound\")");
  command->add_option("--series-ms", options.series_ms,
                      "Add each run's time series to the JSON (runs[].series): bins of this many "
                      "ms, requests by arrival bin, queue depth sampled after every event");
  command->add_option("--timeline", options.timeline_path,
                      "Write the GPU schedule as Chrome trace / Perfetto JSON to this file "
                      "(with several policies: FILE.POLICY.json each)");
  return command;
}

int run_simulate(const SimulateOptions& options, std::ostream& out, std::ostream& err) {
  std::vector<PolicyRun> runs;
  Scenario scenario;
  std::optional<FluidBound> bound;
  try {
    scenario = load_scenario(options.scenario_path);
    apply_simulate_overrides(options, scenario);
    if (options.timeline_path && scenario.cluster) {
      throw InputError::at("", std::nullopt, "--timeline",
                           "not supported for a cluster scenario (cluster: in " +
                               options.scenario_path + "); run one node for a timeline");
    }
    if (options.bound && scenario.cluster) {
      throw InputError::at("", std::nullopt, "--bound",
                           "not supported for a cluster scenario (cluster: in " +
                               options.scenario_path + "); run one node for the bound");
    }
    Duration series_bin{0};
    if (options.series_ms) {
      if (!(*options.series_ms > 0)) {
        throw InputError::at("", std::nullopt, "--series-ms", "expected milliseconds > 0");
      }
      series_bin = seconds_to_duration(*options.series_ms / 1e3);
    }
    const std::vector<PolicySpec> policies = policies_to_run(options, scenario);
    const std::vector<std::string> routings = routings_to_run(options, scenario);
    for (const PolicySpec& policy : policies) {
      for (const std::string& routing : routings) {
        std::ofstream timeline_file;
        std::unique_ptr<TimelineWriter> timeline;
        if (options.timeline_path) {
          const std::string label = routings.size() > 1 ? policy.name + "." + routing : policy.name;
          const std::string path = timeline_path_for(*options.timeline_path, label,
                                                     policies.size() * routings.size() > 1);
          timeline_file.open(path);
          if (!timeline_file) {
            throw InputError::at(path, std::nullopt, "--timeline", "cannot open for writing");
          }
          timeline = std::make_unique<TimelineWriter>(timeline_file, scenario.node.gpu_count);
        }
        runs.push_back(run_policy(scenario, policy, routing, timeline.get(), series_bin));
        if (timeline) timeline->close();
      }
    }
    if (options.bound) bound = scenario_fluid_bound(scenario);
  } catch (const InputError& error) {
    err << "gangway: error: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    err << "gangway: failure while simulating: " << error.what() << "\n";
    return 1;
  }
  if (options.json) {
    nlohmann::json document = simulation_report_json(scenario, runs);
    if (bound) document["bound"] = fluid_bound_json(scenario, *bound, runs);
    out << document.dump() << "\n";
  } else {
    print_simulation_table(out, scenario, runs);
    if (bound) print_fluid_bound(out, *bound, runs);
  }
  return 0;
}

}  // namespace gangway
