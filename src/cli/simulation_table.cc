#include "cli/simulation_table.h"

#include <fmt/format.h>

#include <array>
#include <optional>

#include "cli/simulation_cluster.h"
#include "cli/simulation_html.h"
#include "cli/text_table.h"

namespace gangway {
namespace {

std::optional<double> attainment(const RequestStats& stats) {
  if (stats.arrived() == 0) return std::nullopt;
  return static_cast<double>(stats.slo_met()) / static_cast<double>(stats.arrived());
}

std::optional<double> percentile(const StreamingHistogram& histogram, double q) {
  if (histogram.count() == 0) return std::nullopt;
  return histogram.quantile(q);
}

// The worst p99 TTFT over the small models (the figure their users feel first).
std::optional<double> small_ttft_p99(const Scenario& scenario, const RunMetrics& metrics) {
  std::optional<double> worst;
  for (const ModelSpec& model : scenario.node.models) {
    if (model.is_large()) continue;
    if (const auto p99 = percentile(metrics.model(model.id).ttft_ms(), 0.99)) {
      worst = std::max(worst.value_or(0.0), *p99);
    }
  }
  return worst;
}

std::vector<std::string> reason_counts(const RequestStats& stats) {
  std::vector<std::string> items;
  for (int r = 1; r < kReasonCount; ++r) {
    const auto reason = static_cast<Reason>(r);
    if (const uint64_t count = stats.count_with_reason(reason)) {
      items.push_back(fmt::format("{} {}", to_string(reason), count));
    }
  }
  return items;
}

std::string header_line(const Scenario& scenario, const std::string& seeds) {
  return fmt::format("scenario {}  {}  {}  gangway {}\n", scenario.name, seeds,
                     measured_window_text(to_seconds(scenario.duration - scenario.warmup),
                                          to_seconds(scenario.warmup)),
                     GANGWAY_VERSION);
}

constexpr const char* kLegend =
    "(latencies in ms; SLO: requests meeting their class targets / arrived; \"-\": no data;\n"
    " SLO|adm: requests meeting their class targets / admitted)\n";

}  // namespace

std::string measured_window_text(double measured_s, double warmup_s) {
  if (warmup_s <= 0) return fmt::format("measured {:.0f} s, no warm-up", measured_s);
  return fmt::format("measured {:.0f} s after a {:.0f} s warm-up", measured_s, warmup_s);
}

void print_simulation_table(std::ostream& out, const Scenario& scenario,
                            const std::vector<PolicyRun>& runs) {
  out << header_line(scenario,
                     fmt::format("seed {}", runs.empty() ? scenario.seed : runs.front().seed))
      << "\n";
  const ModelSpec* large = scenario.node.large_model();
  TextTable summary({"policy", "goodput/s", "SLO", "SM TTFT p99", "LM queue p99", "GPU util",
                     "barrier", "idle-wait", "wall s"});
  for (const PolicyRun& run : runs) {
    const RunMetrics& metrics = run.result.metrics;
    const NodeTimeAccount& node = run.result.node_time;
    const double gpu_seconds = to_seconds(node.elapsed()) * node.gpu_count();
    auto fraction = [&](GpuActivity activity) -> std::optional<double> {
      if (!(gpu_seconds > 0)) return std::nullopt;
      return node.total_seconds(activity) / gpu_seconds;
    };
    std::optional<double> busy;
    if (gpu_seconds > 0) {
      busy = *fraction(GpuActivity::kRunningSmall) + *fraction(GpuActivity::kRunningLarge);
    }
    summary.add_row(
        {run_label(run, runs),
         fmt::format("{:.1f}",
                     static_cast<double>(metrics.total().slo_met()) / run.result.measured_s),
         percent_or_dash(attainment(metrics.total())),
         dash_or(small_ttft_p99(scenario, metrics), 1),
         dash_or(large ? percentile(metrics.model(large->id).queue_ms(), 0.99) : std::nullopt, 1),
         percent_or_dash(busy), percent_or_dash(fraction(GpuActivity::kGangBarrier)),
         percent_or_dash(fraction(GpuActivity::kIdleWhileWaiting)),
         fmt::format("{:.2f}", run.wall_s)});
  }
  summary.print(out);
  out << kLegend;

  TextTable cache({"prefix cache", "token hits", "request hits", "pauses", "swaps", "recomputes"});
  for (const PolicyRun& run : runs) {
    PrefixCacheCounters total;
    for (const PrefixCacheCounters& pool : run.kv.stats.pools) total.add(pool);
    std::array<int64_t, kPreemptionModes> modes{};
    for (const auto& model : run.kv.stats.preemptions_by_model) {
      for (int m = 0; m < kPreemptionModes; ++m) modes[m] += model[m].count;
    }
    const bool any = total.prompt_tokens > 0;
    cache.add_row({run_label(run, runs), any ? percent_or_dash(total.token_hit_rate()) : "-",
                   any ? percent_or_dash(total.request_hit_rate()) : "-", std::to_string(modes[0]),
                   std::to_string(modes[1]), std::to_string(modes[2])});
  }
  out << "\n";
  cache.print(out);

  for (const PolicyRun& run : runs) {
    const RunMetrics& metrics = run.result.metrics;
    out << fmt::format("\n{} ({} mode, routing {})\n", run_label(run, runs), run.mode, run.routing);
    TextTable groups({"group", "arrived", "done", "rejected", "SLO", "SLO|adm", "TTFT p50",
                      "TTFT p99", "TPOT p50", "TPOT p99", "e2e p99"},
                     2);
    auto row = [&](const std::string& label, const RequestStats& stats) {
      if (stats.arrived() == 0) return;
      groups.add_row(
          {label, std::to_string(stats.arrived()), std::to_string(stats.completed()),
           std::to_string(stats.rejected()), percent_or_dash(attainment(stats)),
           stats.admitted() == 0 ? "-" : percent_or_dash(stats.slo_attainment_admitted()),
           dash_or(percentile(stats.ttft_ms(), 0.5), 1),
           dash_or(percentile(stats.ttft_ms(), 0.99), 1),
           dash_or(percentile(stats.tpot_ms(), 0.5), 1),
           dash_or(percentile(stats.tpot_ms(), 0.99), 1),
           dash_or(percentile(stats.e2e_ms(), 0.99), 1)});
    };
    for (const SloClass& slo : scenario.node.slo_classes) {
      row("class " + slo.name, metrics.slo_class(slo.id));
    }
    for (const ModelSpec& model : scenario.node.models) {
      row("model " + model.name, metrics.model(model.id));
    }
    for (const ModelSpec& model : scenario.node.models) {
      for (const SloClass& slo : scenario.node.slo_classes) {
        row(model.name + "/" + slo.name, metrics.model_class(model.id, slo.id));
      }
    }
    groups.print(out);
    print_wrapped(out, "not completed", reason_counts(metrics.total()), 2);
  }
  print_cluster_table(out, runs);
}

void print_seed_summary_table(std::ostream& out, const Scenario& scenario,
                              const std::vector<RunGroupSummary>& groups) {
  const std::vector<uint64_t> seeds = groups.empty() ? std::vector<uint64_t>{} : groups[0].seeds;
  const std::string seed_text =
      seeds.empty() ? "no seeds"
                    : fmt::format("seeds {}..{} ({})", seeds.front(), seeds.back(), seeds.size());
  out << header_line(scenario, seed_text) << "\n";
  auto cell = [](const RunGroupSummary& group, const std::string& name, int decimals,
                 bool percent) {
    const SeedSpread* spread = group.figure(name);
    if (spread == nullptr) return std::string("-");
    return with_spread(spread->mean, spread->half_width(), decimals, percent);
  };
  const ModelSpec* large = scenario.node.large_model();
  TextTable summary({"policy", "goodput/s", "SLO", "GPU util", "barrier", "LM queue p99"});
  for (const RunGroupSummary& group : groups) {
    summary.add_row(
        {group.label, cell(group, "total.goodput_rps", 1, false),
         cell(group, "total.slo_attainment", 1, true), cell(group, "node.gpu_utilization", 1, true),
         cell(group, "node.gang_barrier_fraction", 1, true),
         large ? cell(group, "models." + large->name + ".queue_ms.p99", 1, false) : "-"});
  }
  summary.print(out);
  out << "(mean ±half-width of its 95 % confidence interval over the seeds; latencies in ms; "
         "\"-\": no data)\n";
  for (const RunGroupSummary& group : groups) {
    out << fmt::format("\n{} ({} mode, routing {})\n", group.label, group.mode, group.routing);
    TextTable rows({"group", "SLO", "goodput/s", "TTFT p99", "TPOT p50"}, 2);
    for (const SloClass& slo : scenario.node.slo_classes) {
      const std::string key = "classes." + slo.name + ".";
      if (group.figure(key + "slo_attainment") == nullptr) continue;
      rows.add_row({"class " + slo.name, cell(group, key + "slo_attainment", 1, true),
                    cell(group, key + "goodput_rps", 1, false),
                    cell(group, key + "ttft_ms.p99", 1, false), "-"});
    }
    for (const ModelSpec& model : scenario.node.models) {
      const std::string key = "models." + model.name + ".";
      if (group.figure(key + "slo_attainment") == nullptr) continue;
      rows.add_row({"model " + model.name, cell(group, key + "slo_attainment", 1, true),
                    cell(group, key + "goodput_rps", 1, false),
                    cell(group, key + "ttft_ms.p99", 1, false),
                    cell(group, key + "tpot_ms.p50", 1, false)});
    }
    rows.print(out);
  }
}

}  // namespace gangway
