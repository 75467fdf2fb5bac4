#include "cli/simulation_seeds.h"

#include <nlohmann/json.hpp>

#include "cli/text_table.h"

namespace gangway {
namespace {

// The figures summarised, as JSON paths into a run's document. A latency percentile counts only
// where its histogram has samples (the JSON writes 0 for an empty one).
std::vector<std::vector<std::string>> figure_paths(const Scenario& scenario) {
  std::vector<std::vector<std::string>> paths = {
      {"total", "goodput_rps"},          {"total", "slo_attainment"},
      {"total", "ttft_attainment"},      {"node", "gpu_utilization"},
      {"node", "gang_barrier_fraction"}, {"node", "idle_while_waiting_fraction"}};
  for (const SloClass& slo : scenario.node.slo_classes) {
    paths.push_back({"classes", slo.name, "slo_attainment"});
    paths.push_back({"classes", slo.name, "goodput_rps"});
    paths.push_back({"classes", slo.name, "ttft_ms", "p99"});
  }
  for (const ModelSpec& model : scenario.node.models) {
    paths.push_back({"models", model.name, "slo_attainment"});
    paths.push_back({"models", model.name, "goodput_rps"});
    paths.push_back({"models", model.name, "queue_ms", "p99"});
    paths.push_back({"models", model.name, "ttft_ms", "p50"});
    paths.push_back({"models", model.name, "ttft_ms", "p99"});
    paths.push_back({"models", model.name, "tpot_ms", "p50"});
    paths.push_back({"models", model.name, "tpot_ms", "p99"});
  }
  return paths;
}

std::optional<double> read_figure(const nlohmann::json& run, const std::vector<std::string>& path) {
  const nlohmann::json* node = &run;
  const nlohmann::json* parent = nullptr;
  for (const std::string& key : path) {
    if (!node->is_object() || !node->contains(key)) return std::nullopt;
    parent = node;
    node = &(*node)[key];
  }
  if (!node->is_number()) return std::nullopt;
  if (parent != nullptr && parent->contains("count") && (*parent)["count"] == 0) {
    return std::nullopt;
  }
  return node->get<double>();
}

std::string figure_name(const std::vector<std::string>& path) {
  std::string name;
  for (const std::string& key : path) name += (name.empty() ? "" : ".") + key;
  return name;
}

}  // namespace

const SeedSpread* RunGroupSummary::figure(const std::string& name) const {
  for (const auto& [figure_name, spread] : figures) {
    if (figure_name == name) return &spread;
  }
  return nullptr;
}

std::vector<RunGroupSummary> summarize_seeds(const Scenario& scenario,
                                             const std::vector<PolicyRun>& runs,
                                             const nlohmann::json& run_documents) {
  std::vector<RunGroupSummary> groups;
  std::vector<std::vector<size_t>> members;
  for (size_t i = 0; i < runs.size(); ++i) {
    const PolicyRun& run = runs[i];
    size_t g = 0;
    while (g < groups.size() && !(groups[g].policy == run.policy.name &&
                                  groups[g].mode == run.mode && groups[g].routing == run.routing)) {
      ++g;
    }
    if (g == groups.size()) {
      groups.push_back({run_label(run, runs), run.policy.name, run.mode, run.routing, {}, {}});
      members.emplace_back();
    }
    groups[g].seeds.push_back(run.seed);
    members[g].push_back(i);
  }
  const auto paths = figure_paths(scenario);
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const auto& path : paths) {
      std::vector<double> values;
      for (const size_t i : members[g]) {
        if (const auto value = read_figure(run_documents.at(i), path)) values.push_back(*value);
      }
      if (const auto spread = spread_of(values)) {
        groups[g].figures.emplace_back(figure_name(path), *spread);
      }
    }
  }
  return groups;
}

ReportTable seed_report_table(const Scenario& scenario,
                              const std::vector<RunGroupSummary>& groups) {
  ReportTable table;
  const size_t seeds = groups.empty() ? 0 : groups.front().seeds.size();
  table.title = "Over " + std::to_string(seeds) +
                " seeds (mean ± half-width of the 95 % confidence interval)";
  table.header = {"policy", "goodput/s", "SLO"};
  for (const SloClass& slo : scenario.node.slo_classes) table.header.push_back("SLO " + slo.name);
  for (const ModelSpec& model : scenario.node.models) table.header.push_back("SLO " + model.name);
  for (const RunGroupSummary& group : groups) {
    auto cell = [&](const std::string& name, bool percent) {
      const SeedSpread* spread = group.figure(name);
      return spread ? with_spread(spread->mean, spread->half_width(), 1, percent)
                    : std::string("-");
    };
    std::vector<std::string> row = {group.label, cell("total.goodput_rps", false),
                                    cell("total.slo_attainment", true)};
    for (const SloClass& slo : scenario.node.slo_classes) {
      row.push_back(cell("classes." + slo.name + ".slo_attainment", true));
    }
    for (const ModelSpec& model : scenario.node.models) {
      row.push_back(cell("models." + model.name + ".slo_attainment", true));
    }
    table.rows.push_back(row);
  }
  return table;
}

nlohmann::json seed_summary_json(const std::vector<RunGroupSummary>& groups) {
  nlohmann::json summary = nlohmann::json::array();
  for (const RunGroupSummary& group : groups) {
    nlohmann::json figures = nlohmann::json::object();
    for (const auto& [name, spread] : group.figures) {
      figures[name] = {
          {"samples", spread.samples},
          {"mean", spread.mean},
          {"stdev", spread.stdev},
          {"min", spread.min},
          {"max", spread.max},
          {"ci95", spread.ci_low ? nlohmann::json::array({*spread.ci_low, *spread.ci_high})
                                 : nlohmann::json(nullptr)}};
    }
    summary.push_back({{"policy", group.policy},
                       {"mode", group.mode},
                       {"routing", group.routing},
                       {"seeds", group.seeds},
                       {"figures", figures}});
  }
  return summary;
}

}  // namespace gangway
