#include "cli/capacity_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli/simulation_table.h"
#include "cli/svg_plot.h"
#include "cli/text_table.h"

namespace gangway {
namespace {

std::string format_number_plain(double value) {
  return fmt::format("{:g}", value);
}

// A load is never negative: an interval of few, spread-out seeds is cut at 0.
template <typename Read>
std::optional<SeedSpread> over_seeds(const std::vector<SeedSearch>& seeds, Read read) {
  std::vector<double> values;
  for (const SeedSearch& seed : seeds) {
    if (seed.capacity) values.push_back(read(*seed.capacity));
  }
  std::optional<SeedSpread> spread = spread_of(values);
  if (spread && spread->ci_low) spread->ci_low = std::max(0.0, *spread->ci_low);
  return spread;
}

std::string criterion_text(const CapacityReport& report) {
  const CapacityCriterion& criterion = report.criterion;
  if (criterion.measure == CapacityMeasure::kQueueP99) {
    return fmt::format("the 99th percentile of queueing delay stays under {} ms",
                       format_number_plain(criterion.queue_p99_limit_ms));
  }
  const std::string what =
      criterion.measure == CapacityMeasure::kTtft ? "its TTFT target" : "its SLO";
  std::string targets;
  if (criterion.attainment) {
    targets = fmt::format("{}% of its requests", format_number_plain(100 * *criterion.attainment));
  } else {
    bool same = true;
    for (const auto& [name, target] : report.class_targets) {
      same = same && target == report.class_targets.front().second;
    }
    if (same && !report.class_targets.empty()) {
      targets = fmt::format("{}% of its requests",
                            format_number_plain(100 * report.class_targets.front().second));
    } else {
      targets = "its attainment target (";
      for (const auto& [name, target] : report.class_targets) {
        targets += fmt::format("{}{} {}%", targets.back() == '(' ? "" : ", ", name,
                               format_number_plain(100 * target));
      }
      targets += ") of its requests";
    }
  }
  return "every class meets " + what + " on " + targets + ", on every model";
}

// An attainment in percent, rounded down: a miss of a 99 % target never reads "99.0%".
std::string percent_rounded_down(double share) {
  return fmt::format("{:.1f}%", std::floor(1000 * share + 1e-9) / 10);
}

std::string limited_text(const std::optional<WorstPair>& worst, CapacityMeasure measure) {
  if (!worst) return "-";
  if (measure == CapacityMeasure::kQueueP99) {
    return fmt::format("queue p99 {:.0f} ms", worst->attainment);
  }
  return fmt::format("{}@{} {}", worst->slo_class, worst->model,
                     percent_rounded_down(worst->attainment));
}

std::string rps(double value) {
  return value >= 100 ? fmt::format("{:.0f}", value) : fmt::format("{:.1f}", value);
}

// The top of the range in requests per second, from a probe there.
std::optional<double> highest_probe_rps(const CapacityResult& result) {
  std::optional<double> best;
  for (const SeedSearch& seed : result.seeds) {
    for (const ProbeResult& probe : seed.probes)
      best = std::max(best.value_or(0.0), probe.offered_rps);
  }
  return best;
}

std::optional<double> lowest_probe_rps(const CapacityResult& result) {
  std::optional<double> low;
  for (const SeedSearch& seed : result.seeds) {
    for (const ProbeResult& probe : seed.probes) {
      low = std::min(low.value_or(probe.offered_rps), probe.offered_rps);
    }
  }
  return low;
}

nlohmann::json spread_json(const std::optional<SeedSpread>& spread) {
  if (!spread) return nullptr;
  return {{"samples", spread->samples},
          {"mean", spread->mean},
          {"stdev", spread->stdev},
          {"min", spread->min},
          {"max", spread->max},
          {"ci95", spread->ci_low ? nlohmann::json::array({*spread->ci_low, *spread->ci_high})
                                  : nlohmann::json(nullptr)}};
}

nlohmann::json worst_json(const std::optional<WorstPair>& worst) {
  if (!worst) return nullptr;
  return {{"model", worst->model},
          {"class", worst->slo_class},
          {"value", worst->attainment},
          {"target", worst->target}};
}

nlohmann::json probe_json(const ProbeResult& probe) {
  return {{"scale", probe.scale},
          {"offered_rps", probe.offered_rps},
          {"small_rps", probe.small_rps},
          {"large_rps", probe.large_rps},
          {"goodput_rps", probe.goodput_rps},
          {"passed", probe.passed},
          {"worst", worst_json(probe.worst)}};
}

std::string settings_text(const std::vector<ScenarioSetting>& settings) {
  std::string text;
  for (const ScenarioSetting& setting : settings) {
    text += (text.empty() ? "" : " ") + setting.key_path + "=" + setting.value;
  }
  return text;
}

std::string policy_name(const CapacityResult& result) {
  return result.policy.name == "gangway" ? "gangway-" + result.mode : result.policy.name;
}

// "13.9, 186, 8.4": the seeds' answers, when they are so far apart (the highest more than twice
// the lowest) that their mean is no load to plan on.
std::optional<std::string> far_apart_answers(const CapacityResult& result) {
  const std::optional<SeedSpread> capacity = result.capacity_rps();
  if (!capacity || capacity->samples < 2 || !(capacity->max > 2 * capacity->min)) {
    return std::nullopt;
  }
  std::string answers;
  for (const SeedSearch& seed : result.seeds) {
    if (seed.capacity) answers += (answers.empty() ? "" : ", ") + rps(seed.capacity->offered_rps);
  }
  return answers;
}

}  // namespace

std::string short_settings_text(const std::vector<ScenarioSetting>& settings) {
  std::string text;
  for (const ScenarioSetting& setting : settings) {
    const size_t dot = setting.key_path.find_last_of('.');
    const std::string key =
        dot == std::string::npos ? setting.key_path : setting.key_path.substr(dot + 1);
    text += (text.empty() ? "" : " ") + key + "=" + setting.value;
  }
  return text;
}

CapacityBound CapacityResult::bound() const {
  bool above = false;
  for (const SeedSearch& seed : seeds) {
    if (seed.bound == CapacityBound::kBelowRange) return CapacityBound::kBelowRange;
    above = above || seed.bound == CapacityBound::kAboveRange;
  }
  return above ? CapacityBound::kAboveRange : CapacityBound::kInside;
}

std::optional<SeedSpread> CapacityResult::capacity_rps() const {
  return over_seeds(seeds, [](const ProbeResult& p) { return p.offered_rps; });
}
std::optional<SeedSpread> CapacityResult::small_rps() const {
  return over_seeds(seeds, [](const ProbeResult& p) { return p.small_rps; });
}
std::optional<SeedSpread> CapacityResult::large_rps() const {
  return over_seeds(seeds, [](const ProbeResult& p) { return p.large_rps; });
}
std::optional<SeedSpread> CapacityResult::capacity_scale() const {
  return over_seeds(seeds, [](const ProbeResult& p) { return p.scale; });
}

std::optional<WorstPair> CapacityResult::limited_by() const {
  std::vector<const SeedSearch*> failing;
  for (const SeedSearch& seed : seeds) {
    if (seed.first_failure) failing.push_back(&seed);
  }
  if (failing.empty()) return std::nullopt;
  std::sort(failing.begin(), failing.end(), [](const SeedSearch* a, const SeedSearch* b) {
    return a->first_failure->scale < b->first_failure->scale;
  });
  return failing[failing.size() / 2]->first_failure->worst;
}

void print_capacity_table(std::ostream& out, const CapacityReport& report) {
  const std::string seeds = report.seeds.size() == 1
                                ? fmt::format("seed {}", report.seeds.front())
                                : fmt::format("seeds {}..{} ({})", report.seeds.front(),
                                              report.seeds.back(), report.seeds.size());
  out << fmt::format("gangway capacity  scenario {}  {}  {} per probe\n", report.scenario_name,
                     seeds, measured_window_text(report.measured_s, report.warmup_s));
  print_wrapped(out, "criterion", {criterion_text(report)});
  // The first column names what differs between rows: the policy, the --vary settings or both.
  // With one policy it is named above the table, so that long settings are not cut.
  bool several_policies = false;
  bool any_settings = false;
  for (const CapacityResult& result : report.results) {
    several_policies =
        several_policies || policy_name(result) != policy_name(report.results.front());
    any_settings = any_settings || !result.settings.empty();
  }
  const bool policy_in_rows = several_policies || !any_settings;
  out << fmt::format("searched from {}x to {}x the scenario's rates, to within {}%{}\n\n",
                     format_number_plain(report.range.low), format_number_plain(report.range.high),
                     format_number_plain(100 * report.range.tolerance),
                     !several_policies && !report.results.empty()
                         ? ", policy " + policy_name(report.results.front())
                         : "");
  auto row_label = [&](const CapacityResult& result) {
    std::string label = policy_in_rows ? policy_name(result) : "";
    if (any_settings) label += (label.empty() ? "" : " ") + short_settings_text(result.settings);
    return label;
  };
  TextTable table({several_policies && any_settings ? "policy, settings"
                   : any_settings                   ? "settings"
                                                    : "policy",
                   "search", "capacity/s", "95 % CI", "SM/s", "LM/s", "first to fail above it"});
  std::vector<std::string> notes;
  // Searches whose seeds' answers are far apart, and what failed first above them: the worst
  // class sits near its target over a wide range of loads, so where each seed stops is chance.
  std::vector<std::string> far_apart;
  std::vector<std::string> limiting;
  for (const CapacityResult& result : report.results) {
    const std::optional<SeedSpread> capacity = result.capacity_rps();
    std::string value = capacity ? rps(capacity->mean) : "-";
    std::string interval = "-";
    if (capacity && capacity->ci_low) {
      interval = rps(*capacity->ci_low) + "-" + rps(*capacity->ci_high);
    }
    const CapacityBound bound = result.bound();
    if (bound == CapacityBound::kAboveRange) {
      value = ">= " + (capacity ? rps(capacity->min) : "?");
      interval = "above range";
      notes.push_back(fmt::format(
          "{} ({}): every class still met its target at the top of the range ({} req/s, {}x "
          "the scenario's rates); raise it with --range LOW:HIGH",
          row_label(result), to_string(result.scope), rps(highest_probe_rps(result).value_or(0)),
          format_number_plain(report.range.high)));
    } else if (bound == CapacityBound::kBelowRange) {
      value = "< " + rps(lowest_probe_rps(result).value_or(0));
      interval = "below range";
      notes.push_back(fmt::format(
          "{} ({}): even at the bottom of the range ({} req/s, {}x the scenario's rates) a class "
          "missed its target ({}): the node cannot meet these SLOs at any load searched",
          row_label(result), to_string(result.scope), rps(lowest_probe_rps(result).value_or(0)),
          format_number_plain(report.range.low),
          limited_text(result.limited_by(), report.criterion.measure)));
    } else if (const auto answers = far_apart_answers(result)) {
      far_apart.push_back(
          fmt::format("{} {}: {}", row_label(result), to_string(result.scope), *answers));
      const auto worst = result.limited_by();
      const std::string pair = worst && report.criterion.measure != CapacityMeasure::kQueueP99
                                   ? worst->slo_class + "@" + worst->model
                                   : std::string("the criterion");
      if (std::find(limiting.begin(), limiting.end(), pair) == limiting.end()) {
        limiting.push_back(pair);
      }
    }
    const auto small = result.small_rps();
    const auto large = result.large_rps();
    table.add_row({row_label(result), to_string(result.scope), value, interval,
                   small && small->mean > 0 ? rps(small->mean) : "-",
                   large && large->mean > 0 ? rps(large->mean) : "-",
                   limited_text(result.limited_by(), report.criterion.measure)});
  }
  table.print(out);
  out << "(capacity: the highest load meeting the criterion, requests/s, mean over the seeds;\n"
         " SM/s and LM/s: its small- and large-model parts)\n";
  if (!far_apart.empty()) {
    std::string pairs;
    for (size_t i = 0; i < limiting.size(); ++i) {
      pairs += (i == 0 ? "" : i + 1 == limiting.size() ? " and " : ", ") + limiting[i];
    }
    std::string answers;
    for (const std::string& entry : far_apart) answers += (answers.empty() ? "" : "; ") + entry;
    notes.push_back(fmt::format(
        "the seeds disagree ({} req/s): {} stays near its target over a wide range of loads, so "
        "the mean is no load to plan on and more seeds will not settle it. See its attainment "
        "against load (--report); relax its target or change what limits it (docs/guide.md, \"A "
        "wide interval\").",
        answers, pairs));
  }
  for (const std::string& note : notes) print_paragraph(out, "note", note);
  // The best policy or setting per search, when there is a choice, and whether it leads by more
  // than the seeds' spread.
  for (const CapacityScope scope :
       {CapacityScope::kSmall, CapacityScope::kLarge, CapacityScope::kMix}) {
    std::vector<std::pair<double, const CapacityResult*>> ranked;
    size_t candidates = 0;
    for (const CapacityResult& result : report.results) {
      if (result.scope != scope) continue;
      ++candidates;
      if (const auto capacity = result.capacity_rps()) ranked.emplace_back(capacity->mean, &result);
    }
    if (ranked.empty() || candidates < 2) continue;
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    const CapacityResult& best = *ranked.front().second;
    std::string text = fmt::format("{} ({} req/s)", row_label(best), rps(ranked.front().first));
    if (ranked.size() > 1) {
      const auto first = best.capacity_rps();
      const auto second = ranked[1].second->capacity_rps();
      if (first->ci_low && second->ci_high && *first->ci_low <= *second->ci_high) {
        text += fmt::format(", not a clear lead: its 95 % interval overlaps that of {}",
                            row_label(*ranked[1].second));
      }
    }
    print_paragraph(out, fmt::format("best for {}", to_string(scope)), text);
  }
}

nlohmann::json capacity_report_json(const CapacityReport& report) {
  nlohmann::json models = nlohmann::json::array();
  for (const CapacityReport::Model& model : report.models) {
    models.push_back({{"name", model.name},
                      {"tier", model.tier},
                      {"replicas", model.replicas},
                      {"tensor_parallel", model.tensor_parallel}});
  }
  nlohmann::json targets = nlohmann::json::object();
  for (const auto& [name, target] : report.class_targets) targets[name] = target;
  nlohmann::json results = nlohmann::json::array();
  for (const CapacityResult& result : report.results) {
    nlohmann::json settings = nlohmann::json::object();
    for (const ScenarioSetting& setting : result.settings)
      settings[setting.key_path] = setting.value;
    nlohmann::json per_seed = nlohmann::json::array();
    for (const SeedSearch& seed : result.seeds) {
      nlohmann::json probes = nlohmann::json::array();
      for (const ProbeResult& probe : seed.probes) probes.push_back(probe_json(probe));
      per_seed.push_back(
          {{"seed", seed.seed},
           {"bound", to_string(seed.bound)},
           {"capacity", seed.capacity ? probe_json(*seed.capacity) : nlohmann::json(nullptr)},
           {"first_failure",
            seed.first_failure ? probe_json(*seed.first_failure) : nlohmann::json(nullptr)},
           {"probes", probes}});
    }
    results.push_back({{"policy", result.policy.name},
                       {"mode", result.mode},
                       {"label", result.label},
                       {"settings", settings},
                       {"search", to_string(result.scope)},
                       {"bound", to_string(result.bound())},
                       {"capacity_rps", spread_json(result.capacity_rps())},
                       {"small_rps", spread_json(result.small_rps())},
                       {"large_rps", spread_json(result.large_rps())},
                       {"capacity_scale", spread_json(result.capacity_scale())},
                       {"limited_by", worst_json(result.limited_by())},
                       {"per_seed", per_seed}});
  }
  return {
      {"gangway_version", GANGWAY_VERSION},
      {"scenario", report.scenario_name},
      {"gpus", report.gpus},
      {"hardware", report.hardware},
      {"models", models},
      {"criterion",
       {{"measure", to_string(report.criterion.measure)},
        {"attainment", report.criterion.attainment ? nlohmann::json(*report.criterion.attainment)
                                                   : nlohmann::json(nullptr)},
        {"class_targets", targets},
        {"queue_p99_limit_ms", report.criterion.queue_p99_limit_ms},
        {"text", criterion_text(report)}}},
      {"range",
       {{"low", report.range.low},
        {"high", report.range.high},
        {"tolerance", report.range.tolerance}}},
      {"seeds", report.seeds},
      {"measured_s", report.measured_s},
      {"warmup_s", report.warmup_s},
      {"results", results}};
}

HtmlReport capacity_report_html(const CapacityReport& report) {
  HtmlReport html("gangway capacity: " + report.scenario_name);
  html.paragraph("Criterion: " + criterion_text(report) + ". " +
                 fmt::format("Seeds {}..{} ({}), {} per probe; searched from {}x to {}x the "
                             "scenario's rates, to within {}%.",
                             report.seeds.front(), report.seeds.back(), report.seeds.size(),
                             measured_window_text(report.measured_s, report.warmup_s),
                             format_number_plain(report.range.low),
                             format_number_plain(report.range.high),
                             format_number_plain(100 * report.range.tolerance)));
  std::vector<std::vector<std::string>> rows;
  for (const CapacityResult& result : report.results) {
    const auto capacity = result.capacity_rps();
    std::string interval = "-";
    if (capacity && capacity->ci_low) {
      interval = rps(*capacity->ci_low) + " - " + rps(*capacity->ci_high);
    }
    rows.push_back({result.label, to_string(result.scope), capacity ? rps(capacity->mean) : "-",
                    interval,
                    result.bound() == CapacityBound::kInside ? "" : to_string(result.bound()),
                    settings_text(result.settings),
                    limited_text(result.limited_by(), report.criterion.measure)});
  }
  html.table({"policy", "search", "capacity req/s", "95 % CI", "range", "settings",
              "first to fail above it"},
             rows);
  const bool queue = report.criterion.measure == CapacityMeasure::kQueueP99;
  for (const CapacityScope scope :
       {CapacityScope::kSmall, CapacityScope::kLarge, CapacityScope::kMix}) {
    std::vector<Bar> bars;
    std::vector<PlotSeries> series;
    for (const CapacityResult& result : report.results) {
      if (result.scope != scope) continue;
      const auto capacity = result.capacity_rps();
      Bar bar{result.label, capacity ? capacity->mean : 0.0, {}, {}, ""};
      if (capacity && capacity->ci_low) {
        bar.low = *capacity->ci_low;
        bar.high = *capacity->ci_high;
      }
      if (result.bound() != CapacityBound::kInside) bar.note = to_string(result.bound());
      bars.push_back(bar);
      PlotSeries points{result.label, {}, false, true};
      for (const SeedSearch& seed : result.seeds) {
        for (const ProbeResult& probe : seed.probes) {
          if (!probe.worst) continue;
          points.points.emplace_back(
              probe.offered_rps, queue ? probe.worst->attainment : 100 * probe.worst->attainment);
        }
      }
      std::sort(points.points.begin(), points.points.end());
      series.push_back(std::move(points));
    }
    if (bars.empty()) continue;
    html.heading(
        std::string("Search: ") + to_string(scope) +
        (scope == CapacityScope::kMix ? " (the scenario's own mix)" : " model tier alone"));
    PlotAxes bar_axes;
    bar_axes.title = "Capacity (mean, 95 % CI over seeds)";
    bar_axes.y_label = "requests/s";
    PlotAxes load_axes;
    load_axes.title =
        queue ? "Queueing delay p99 against load" : "Worst class attainment against load";
    load_axes.x_label = "offered load, requests/s (log scale)";
    load_axes.y_label = queue ? "queue p99, ms" : "% met (worst model and class)";
    load_axes.log_x = true;
    if (queue) {
      load_axes.y_reference = report.criterion.queue_p99_limit_ms;
      load_axes.y_reference_label = "limit";
    } else {
      const double target = report.criterion.attainment.value_or(
          report.class_targets.empty() ? 0.99 : report.class_targets.front().second);
      load_axes.y_reference = 100 * target;
      load_axes.y_reference_label = "target";
      load_axes.y_max = 100;
    }
    html.plot_row({bar_chart_svg(bar_axes, bars), line_chart_svg(load_axes, series)},
                  {"Policies and settings side by side.",
                   "Every probe of every seed: the (model, class) pair furthest below its "
                   "target at that load."});
  }
  return html;
}

}  // namespace gangway
