#include "cli/capacity_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "cli/capacity_report.h"
#include "cli/capacity_search.h"
#include "cli/parallel_runs.h"
#include "cli/progress_bar.h"
#include "cli/run_warnings.h"
#include "config/yaml_reader.h"
#include "core/input_error.h"
#include "sched/gang_policy.h"
#include "sched/policy_registry.h"

namespace gangway {
namespace {

// One point of the --vary grid: its settings and the scenario they give.
struct Variant {
  std::vector<ScenarioSetting> settings;
  Scenario scenario;
};

// "KEY=V1,V2": commas inside brackets or braces belong to a value ("[0, 1]").
std::vector<ScenarioSetting> parse_vary(const std::string& text) {
  const ScenarioSetting whole = parse_scenario_setting(text, "--vary");
  std::vector<ScenarioSetting> values;
  std::string current;
  int depth = 0;
  for (const char c : whole.value) {
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      values.push_back({whole.key_path, current, whole.flag});
      current.clear();
    } else {
      current += c;
    }
  }
  values.push_back({whole.key_path, current, whole.flag});
  for (const ScenarioSetting& value : values) {
    if (value.value.empty()) {
      throw InputError::at(
          "", std::nullopt, "--vary",
          "expected KEY.PATH=V1,V2,... with no empty value, got " + in_quotes(text));
    }
  }
  return values;
}

std::vector<std::vector<ScenarioSetting>> grid(const std::vector<std::string>& varies) {
  std::vector<std::vector<ScenarioSetting>> points = {{}};
  for (const std::string& vary : varies) {
    std::vector<std::vector<ScenarioSetting>> next;
    for (const auto& point : points) {
      for (const ScenarioSetting& value : parse_vary(vary)) {
        next.push_back(point);
        next.back().push_back(value);
      }
    }
    points = std::move(next);
  }
  return points;
}

std::pair<double, double> parse_range(const std::string& text) {
  const size_t colon = text.find(':');
  try {
    if (colon != std::string::npos) {
      size_t used_low = 0;
      size_t used_high = 0;
      const std::string low_text = text.substr(0, colon);
      const std::string high_text = text.substr(colon + 1);
      const double low = std::stod(low_text, &used_low);
      const double high = std::stod(high_text, &used_high);
      if (used_low == low_text.size() && used_high == high_text.size() && low > 0 && high >= low &&
          high <= 1e6) {
        return {low, high};
      }
    }
  } catch (const std::logic_error&) {
  }
  throw InputError::at("", std::nullopt, "--range",
                       "expected LOW:HIGH, multiples of the scenario's rates with 0 < LOW <= "
                       "HIGH (e.g. 0.01:100), got '" +
                           text + "'");
}

CapacityCriterion parse_criterion(const CapacityOptions& options) {
  CapacityCriterion criterion;
  if (options.measure == "slo") {
    criterion.measure = CapacityMeasure::kSlo;
  } else if (options.measure == "ttft") {
    criterion.measure = CapacityMeasure::kTtft;
  } else if (options.measure == "queue-p99") {
    criterion.measure = CapacityMeasure::kQueueP99;
  } else {
    throw InputError::at("", std::nullopt, "--measure",
                         "expected slo, ttft or queue-p99, got '" + options.measure + "'");
  }
  if (options.attainment) {
    double value = *options.attainment;
    if (value > 1 && value <= 100) value /= 100;  // "99" means 99 %
    if (!(value > 0 && value <= 1)) {
      throw InputError::at("", std::nullopt, "--attainment",
                           "expected a share in (0, 1] (or a percentage), got " +
                               format_number(*options.attainment));
    }
    criterion.attainment = value;
  }
  if (!(options.queue_p99_ms > 0)) {
    throw InputError::at("", std::nullopt, "--queue-p99-ms", "expected milliseconds > 0");
  }
  criterion.queue_p99_limit_ms = options.queue_p99_ms;
  return criterion;
}

std::vector<CapacityScope> parse_searches(const CapacityOptions& options) {
  if (options.searches.empty()) {
    return {CapacityScope::kSmall, CapacityScope::kLarge, CapacityScope::kMix};
  }
  std::vector<CapacityScope> scopes;
  for (const std::string& name : options.searches) {
    if (name == "small") {
      scopes.push_back(CapacityScope::kSmall);
    } else if (name == "large") {
      scopes.push_back(CapacityScope::kLarge);
    } else if (name == "mix") {
      scopes.push_back(CapacityScope::kMix);
    } else {
      throw InputError::at("", std::nullopt, "--search",
                           "expected small, large or mix, got '" + name + "'");
    }
  }
  return scopes;
}

void apply_capacity_overrides(const CapacityOptions& options, Scenario& scenario) {
  if (options.rate_scale) {
    throw InputError::at("", std::nullopt, "--rate-scale",
                         "not used by capacity: it searches the rate itself (see --range)");
  }
  apply_workload_overrides(options, scenario);
  if (options.drain_s) {
    if (!(*options.drain_s >= 0)) {
      throw InputError::at("", std::nullopt, "--drain", "expected seconds >= 0");
    }
    scenario.drain_limit = seconds_to_duration(*options.drain_s);
  }
}

std::string policy_label(const PolicySpec& policy) {
  return policy.name == "gangway" ? std::string("gangway-") + to_string(policy.mode) : policy.name;
}

struct Task {
  size_t result = 0;  // index into the report's results
  uint64_t seed = 0;
};

}  // namespace

CLI::App* add_capacity_command(CLI::App& app, CapacityOptions& options) {
  CLI::App* command = app.add_subcommand(
      "capacity",
      "Find the highest load (req/s) at which every SLO class meets its attainment target, per "
      "model tier and for the scenario's mix, over several seeds, with a confidence interval");
  command
      ->add_option("scenario", options.scenario_path, "Scenario YAML file (see docs/scenario.md)")
      ->required();
  command->add_option("--policy", options.policies,
                      "Gang policy to search under; repeat to compare several (default: the "
                      "scenario's policy)");
  add_set_option(*command, options.settings);
  command
      ->add_option("--vary", options.varies,
                   "Search each of these values of one key: KEY.PATH=V1,V2,... (e.g. "
                   "policy.lease_max_ms=60,100,150); several --vary make a grid")
      ->type_name("KEY.PATH=V1,V2");
  command->add_option("--search", options.searches,
                      "What to scale: small (small-model streams alone), large (the large "
                      "model's alone) or mix (all together); repeatable (default: all three)");
  command->add_option("--seeds", options.seeds,
                      "N seeds from --seed (or the scenario's), or A..B (default 3)");
  command->add_option("--seed", options.seed, "The first seed (default: the scenario's)");
  command->add_option("--attainment", options.attainment,
                      "Share of each class's requests that must meet its SLO, e.g. 0.99 or 99 "
                      "(default: each class's attainment_target, 99 % unless it says otherwise)");
  command->add_option("--measure", options.measure,
                      "slo (TTFT and TPOT targets, default), ttft (TTFT target only) or "
                      "queue-p99 (queueing delay p99 under --queue-p99-ms: a throughput "
                      "yardstick without SLOs)");
  command->add_option("--queue-p99-ms", options.queue_p99_ms,
                      "The queueing delay limit of --measure queue-p99 (default 1000)");
  command->add_option("--range", options.range,
                      "Search between LOW and HIGH times the scenario's rates (default 0.01:100)");
  command->add_option("--tolerance", options.tolerance,
                      "Stop when the answer is known to within this share (default 0.03)");
  command->add_option(
      "--duration", options.duration_s,
      "Each probe's arrival window in seconds (default: the scenario's duration_s)");
  command->add_option("--drain", options.drain_s, "Override the scenario's drain_s");
  command->add_flag("--json", options.json, "Print exactly one JSON document on stdout");
  command->add_option("--report", options.report_path,
                      "Also write an HTML page with plots (attainment against load, the policies "
                      "side by side) to this file");
  command->add_option("--jobs", options.jobs,
                      "Simulations to run at once (default: the machine's hardware threads)");
  command->add_flag("--no-progress", options.no_progress, "No progress bar on a terminal");
  command->footer(
      "Examples:\n"
      "  gangway capacity examples/peak-mixed.yaml\n"
      "  gangway capacity examples/peak-mixed.yaml --search mix --policy gangway --policy \\\n"
      "      time-slice --vary policy.lease_max_ms=60,100,150 --report /tmp/capacity.html");
  return command;
}

int run_capacity(const CapacityOptions& options, std::ostream& out, std::ostream& err,
                 bool progress_to_terminal) {
  CapacityReport report;
  std::vector<Variant> variants;
  std::vector<Task> tasks;
  std::vector<size_t> variant_of;  // per result: the variant it searches
  int jobs = 1;
  try {
    const std::vector<ScenarioSetting> base_settings = parse_settings(options.settings);
    for (const std::vector<ScenarioSetting>& point : grid(options.varies)) {
      std::vector<ScenarioSetting> settings = base_settings;
      settings.insert(settings.end(), point.begin(), point.end());
      Scenario scenario = load_scenario(options.scenario_path, settings);
      apply_capacity_overrides(options, scenario);
      variants.push_back({point, std::move(scenario)});
    }
    const Scenario& base = variants.front().scenario;
    report.criterion = parse_criterion(options);
    const auto [low, high] = parse_range(options.range);
    report.range = {low, high, options.tolerance};
    if (!(options.tolerance > 0 && options.tolerance < 1)) {
      throw InputError::at("", std::nullopt, "--tolerance", "expected a share in (0, 1)");
    }
    report.seeds = parse_seeds(options.seeds, base.seed);
    if (options.jobs && *options.jobs < 1) {
      throw InputError::at("", std::nullopt, "--jobs", "expected at least 1");
    }
    jobs = options.jobs.value_or(default_jobs());
    report.scenario_name = base.name;
    report.scenario_path = options.scenario_path;
    for (const ModelSpec& model : base.node.models) {
      report.models.push_back({model.name, to_string(model.tier),
                               model.is_large() ? 1 : static_cast<int>(model.gpus.size()),
                               model.tensor_parallel});
    }
    report.hardware = base.node.hardware.name;
    report.gpus = base.node.gpu_count;
    for (const SloClass& slo : base.node.slo_classes) {
      report.class_targets.emplace_back(slo.name, slo.attainment_target);
    }
    report.measured_s = to_seconds(base.duration - base.warmup);
    report.warmup_s = to_seconds(base.warmup);
    const std::vector<CapacityScope> scopes = parse_searches(options);
    for (const CapacityScope scope : scopes) {
      if (!options.searches.empty() && !scope_applies(base, scope)) {
        probe_scenario(base, scope, 1, base.seed);  // throws, naming why
      }
    }
    std::set<std::string> warnings_given;
    for (size_t v = 0; v < variants.size(); ++v) {
      const Scenario& scenario = variants[v].scenario;
      std::vector<PolicySpec> policies;
      if (options.policies.empty()) policies.push_back(scenario.policy);
      for (const std::string& name : options.policies) {
        PolicySpec spec = scenario.policy;  // the scenario's parameters apply to any policy
        spec.name = name;
        validate_policy_spec(spec);
        policies.push_back(spec);
      }
      for (const PolicySpec& policy : policies) {
        // Once per distinct warning: variants that leave the shares alone say the same.
        std::ostringstream warning;
        warn_if_pace_reserve_cannot_pace_one(scenario.node, policy, warning);
        if (!warning.str().empty() && warnings_given.insert(warning.str()).second) {
          err << warning.str();
        }
        for (const CapacityScope scope : scopes) {
          if (!scope_applies(scenario, scope)) continue;
          CapacityResult result;
          result.policy = policy;
          result.mode = to_string(make_policy(policy)->mode());
          result.settings = variants[v].settings;
          result.scope = scope;
          result.label = policy_label(policy);
          if (!result.settings.empty()) result.label += " " + short_settings_text(result.settings);
          result.seeds.resize(report.seeds.size());
          for (size_t s = 0; s < report.seeds.size(); ++s) {
            tasks.push_back({report.results.size(), report.seeds[s]});
          }
          report.results.push_back(std::move(result));
          variant_of.push_back(v);
        }
      }
    }
  } catch (const InputError& error) {
    err << "gangway: error: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    err << "gangway: error: " << error.what() << "\n";
    return 2;
  }

  // About this many probes per search: a few to bracket, log2(log(2) / log(1 + tolerance)) to
  // bisect. Only for the progress bar.
  const double expected_probes = 3 + std::log2(std::log(2.0) / std::log(1 + options.tolerance));
  ProgressBar progress(progress_to_terminal && !options.no_progress ? &err : nullptr,
                       static_cast<double>(tasks.size()), "of the searches");
  std::atomic<int> probes_run{0};
  std::atomic<int> searches_done{0};
  std::vector<std::atomic<int>> probes_in(tasks.size());
  auto update = [&] {
    double done = searches_done.load();
    for (size_t i = 0; i < tasks.size(); ++i) {
      done += std::min(0.9, probes_in[i].load() / expected_probes);
    }
    progress.update(done, fmt::format("{} probes", probes_run.load()));
  };
  try {
    progress.update(0, "starting");
    run_in_parallel(tasks.size(), jobs, [&](size_t t) {
      const Task& task = tasks[t];
      CapacityResult& result = report.results[task.result];
      const Scenario& scenario = variants[variant_of[task.result]].scenario;
      const size_t seed_index = static_cast<size_t>(
          std::find(report.seeds.begin(), report.seeds.end(), task.seed) - report.seeds.begin());
      result.seeds[seed_index] =
          search_capacity(scenario, result.policy, scenario.scheduler.routing, result.scope,
                          task.seed, report.criterion, report.range, [&] {
                            ++probes_run;
                            ++probes_in[t];
                            update();
                          });
      probes_in[t] = 0;
      ++searches_done;
      update();
    });
    progress.finish();
  } catch (const InputError& error) {
    progress.finish();
    err << "gangway: error: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    progress.finish();
    err << "gangway: failure while searching: " << error.what() << "\n";
    return 1;
  }
  if (options.json) {
    out << capacity_report_json(report).dump() << "\n";
  } else {
    print_capacity_table(out, report);
  }
  if (options.report_path) {
    try {
      capacity_report_html(report).write(*options.report_path);
    } catch (const InputError& error) {
      err << "gangway: error: " << error.what() << "\n";
      return 2;
    }
  }
  return 0;
}

}  // namespace gangway
