#include "cli/simulate_command.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/bound_report.h"
#include "cli/parallel_runs.h"
#include "cli/run_warnings.h"
#include "cli/simulation_html.h"
#include "cli/simulation_report.h"
#include "cli/simulation_run.h"
#include "cli/simulation_seeds.h"
#include "cli/simulation_table.h"
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

// "START:END" seconds (either may be left out: from the start, to the end).
std::pair<Time, Time> parse_timeline_window(const std::string& text) {
  const auto fail = [&]() -> std::pair<Time, Time> {
    throw InputError::at(
        "", std::nullopt, "--timeline-window",
        "expected START:END in seconds of simulated time (e.g. 30:40), got '" + text + "'");
  };
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return fail();
  const auto seconds = [&](const std::string& part, double fallback) {
    if (part.empty()) return fallback;
    try {
      size_t used = 0;
      const double value = std::stod(part, &used);
      if (used != part.size() || !(value >= 0) || value > 1e9) fail();
      return value;
    } catch (const std::logic_error&) {
      fail();
    }
    return fallback;
  };
  const double start = seconds(text.substr(0, colon), 0);
  const double end = seconds(text.substr(colon + 1), 1e9);
  if (!(end > start)) return fail();
  return {Time::zero() + seconds_to_duration(start), Time::zero() + seconds_to_duration(end)};
}

struct PlannedRun {
  PolicySpec policy;
  std::string routing;
  uint64_t seed = 0;
  std::optional<std::string> timeline_path;
};

}  // namespace

CLI::App* add_simulate_command(CLI::App& app, SimulateOptions& options) {
  CLI::App* command = app.add_subcommand(
      "simulate", "Run a scenario in the deterministic simulator and compare gang policies");
  command
      ->add_option("scenario", options.scenario_path, "Scenario YAML file (see docs/scenario.md)")
      ->required();
  command->add_option("--policy", options.policies,
                      "Gang policy to run; repeat to compare several on the same arrivals "
                      "(default: the scenario's policy, else gangway in lease mode)");
  command->add_option("--routing", options.routings,
                      "Small-model routing rule (predicted-ttft, late-binding, round-robin, "
                      "least-loaded, cache-only, sglang); repeat to compare several, each under "
                      "every --policy (default: the scenario's scheduler.routing)");
  add_set_option(*command, options.settings);
  command->add_option("--seed", options.seed, "Override the scenario's seed");
  command->add_option("--seeds", options.seeds,
                      "Run on N seeds (from --seed or the scenario's seed) or on seeds A..B, and "
                      "report each figure's mean and 95 % confidence interval");
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
  command->add_option("--report", options.report_path,
                      "Also write an HTML page with plots (CDFs, GPU time, queues, policies side "
                      "by side) to this file; it opens offline");
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
  command->add_option("--timeline-window", options.timeline_window,
                      "Only this part of the run in the timeline: START:END, seconds of "
                      "simulated time (e.g. 30:40)");
  command->add_option("--jobs", options.jobs,
                      "Simulations to run at once (default: the machine's hardware threads)");
  command->footer(
      "Examples:\n"
      "  gangway simulate examples/peak-mixed.yaml --policy gangway --policy time-slice\n"
      "  gangway simulate examples/peak-mixed.yaml --seeds 5 --set policy.lease_max_ms=100 \\\n"
      "      --report /tmp/peak.html");
  return command;
}

int run_simulate(const SimulateOptions& options, std::ostream& out, std::ostream& err) {
  std::vector<PolicyRun> runs;
  Scenario scenario;
  std::optional<FluidBound> bound;
  std::vector<uint64_t> seeds;
  try {
    scenario = load_scenario_with_settings(options.scenario_path, options.settings);
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
    if (options.timeline_window && !options.timeline_path) {
      throw InputError::at("", std::nullopt, "--timeline-window", "needs --timeline FILE");
    }
    const std::optional<std::pair<Time, Time>> window =
        options.timeline_window ? std::optional(parse_timeline_window(*options.timeline_window))
                                : std::nullopt;
    Duration series_bin{0};
    if (options.series_ms) {
      if (!(*options.series_ms > 0)) {
        throw InputError::at("", std::nullopt, "--series-ms", "expected milliseconds > 0");
      }
      series_bin = seconds_to_duration(*options.series_ms / 1e3);
    } else if (options.report_path) {
      series_bin = report_series_bin(scenario);
    }
    if (options.jobs && *options.jobs < 1) {
      throw InputError::at("", std::nullopt, "--jobs", "expected at least 1");
    }
    seeds = options.seeds ? parse_seeds(*options.seeds, scenario.seed)
                          : std::vector<uint64_t>{scenario.seed};
    const std::vector<PolicySpec> policies = policies_to_run(options, scenario);
    const std::vector<std::string> routings = routings_to_run(options, scenario);
    for (const PolicySpec& policy : policies) {
      warn_if_pace_reserve_cannot_pace_one(scenario.node, policy, err);
    }
    std::vector<PlannedRun> plan;
    for (const uint64_t seed : seeds) {
      for (const PolicySpec& policy : policies) {
        for (const std::string& routing : routings) {
          PlannedRun planned{policy, routing, seed, std::nullopt};
          if (options.timeline_path && seed == seeds.front()) {  // the first seed's schedule
            const std::string label =
                routings.size() > 1 ? policy.name + "." + routing : policy.name;
            planned.timeline_path = timeline_path_for(*options.timeline_path, label,
                                                      policies.size() * routings.size() > 1);
          }
          plan.push_back(planned);
        }
      }
    }
    if (options.bound) bound = scenario_fluid_bound(scenario);
    std::vector<std::optional<PolicyRun>> results(plan.size());
    run_in_parallel(plan.size(), options.jobs.value_or(default_jobs()), [&](size_t i) {
      const PlannedRun& planned = plan[i];
      Scenario seeded = scenario;
      seeded.seed = planned.seed;
      std::ofstream timeline_file;
      std::unique_ptr<TimelineWriter> timeline;
      if (planned.timeline_path) {
        timeline_file.open(*planned.timeline_path);
        if (!timeline_file) {
          throw InputError::at(*planned.timeline_path, std::nullopt, "--timeline",
                               "cannot open for writing");
        }
        timeline = std::make_unique<TimelineWriter>(timeline_file, scenario.node.gpu_count);
        if (window) timeline->set_window(window->first, window->second);
      }
      results[i] = run_policy(seeded, planned.policy, planned.routing, timeline.get(), series_bin);
      if (timeline) timeline->close();
    });
    for (std::optional<PolicyRun>& result : results) runs.push_back(std::move(*result));
    for (const PlannedRun& planned : plan) {
      if (planned.timeline_path) warn_if_timeline_is_large(*planned.timeline_path, err);
    }
    warn_about_models_without_traffic(scenario, runs.front().result.metrics, err);
  } catch (const InputError& error) {
    err << "gangway: error: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    err << "gangway: failure while simulating: " << error.what() << "\n";
    return 1;
  }
  nlohmann::json document = simulation_report_json(scenario, runs);
  std::vector<RunGroupSummary> summary;
  if (seeds.size() > 1) {
    summary = summarize_seeds(scenario, runs, document["runs"]);
    document["seeds"] = seeds;
    document["summary"] = seed_summary_json(summary);
  }
  if (bound) document["bound"] = fluid_bound_json(scenario, *bound, runs);
  if (options.json) {
    out << document.dump() << "\n";
  } else if (seeds.size() > 1) {
    print_seed_summary_table(out, scenario, summary);
    if (bound) print_fluid_bound(out, *bound, runs);
  } else {
    print_simulation_table(out, scenario, runs);
    if (bound) print_fluid_bound(out, *bound, runs);
  }
  if (options.report_path) {
    try {
      std::vector<PolicyRun> first_seed;
      for (PolicyRun& run : runs) {
        if (run.seed == seeds.front()) first_seed.push_back(std::move(run));
      }
      std::vector<ReportTable> tables;
      if (seeds.size() > 1) tables.push_back(seed_report_table(scenario, summary));
      simulation_report_html(scenario, first_seed, tables).write(*options.report_path);
    } catch (const InputError& error) {
      err << "gangway: error: " << error.what() << "\n";
      return 2;
    }
  }
  return 0;
}

}  // namespace gangway
