#include "cli/simulation_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/svg_plot.h"

namespace gangway {
namespace {

std::vector<std::pair<double, double>> cdf_points(const StreamingHistogram& histogram) {
  std::vector<std::pair<double, double>> points;
  if (histogram.count() == 0) return points;
  for (int i = 0; i <= 100; ++i) {
    const double q = i / 100.0;
    points.emplace_back(histogram.quantile(q), q);
  }
  points.insert(points.end() - 1, {histogram.quantile(0.995), 0.995});
  points.insert(points.end() - 1, {histogram.quantile(0.999), 0.999});
  return points;
}

// One request group per (class, tier): the SM vs LM view of each class's latency.
struct TierClass {
  std::string label;
  RequestStats stats;
};

std::vector<TierClass> tier_classes(const Scenario& scenario, const RunMetrics& metrics) {
  std::vector<TierClass> groups;
  for (const SloClass& slo : scenario.node.slo_classes) {
    for (const ModelTier tier : {ModelTier::kSmall, ModelTier::kLarge}) {
      TierClass group{slo.name + ", " + to_string(tier) + " model", RequestStats()};
      for (const ModelSpec& model : scenario.node.models) {
        if (model.tier == tier) group.stats.merge(metrics.model_class(model.id, slo.id));
      }
      if (group.stats.arrived() > 0) groups.push_back(std::move(group));
    }
  }
  return groups;
}

std::string cdf_svg(const std::string& title, const std::string& what,
                    const std::vector<TierClass>& groups, bool ttft) {
  std::vector<PlotSeries> series;
  for (const TierClass& group : groups) {
    const StreamingHistogram& histogram = ttft ? group.stats.ttft_ms() : group.stats.tpot_ms();
    if (histogram.count() == 0) continue;
    series.push_back({group.label, cdf_points(histogram), true, false});
  }
  PlotAxes axes;
  axes.title = title;
  axes.x_label = what + ", ms (log scale)";
  axes.y_label = "share of requests";
  axes.log_x = true;
  axes.y_min = 0;
  axes.y_max = 1;
  return line_chart_svg(axes, series);
}

std::vector<double> doubles(const nlohmann::json& list, double scale = 1.0) {
  std::vector<double> values;
  for (const auto& v : list) values.push_back(scale * v.get<double>());
  return values;
}

void time_plots(HtmlReport& report, const std::vector<const PolicyRun*>& runs,
                const std::vector<std::string>& labels) {
  std::vector<std::string> activity, phases, queues, kv;
  for (size_t r = 0; r < runs.size(); ++r) {
    if (!runs[r]->result.series) continue;
    const nlohmann::json series = runs[r]->result.series->to_json();
    if (!series.contains("gpu_s")) continue;
    const double bin = series["bin_s"].get<double>();
    const std::vector<double> t = doubles(series["t_s"]);
    const nlohmann::json& gpu = series["gpu_s"];
    const auto gpus = [&](const char* key) { return doubles(gpu[key], 1.0 / bin); };
    std::vector<double> idle = gpus("idle");
    std::vector<StackedLayer> layers = {
        {"small models", "#1f77b4", gpus("running_small")},
        {"large model (gang)", "#d62728", gpus("running_large")},
        {"gang barrier", "#ff7f0e", gpus("gang_barrier")},
        {"idle, work waiting", "#bcbd22", gpus("idle_while_waiting")},
        {"idle", "#dddddd", idle}};
    const std::vector<double> failed = gpus("failed");
    if (std::any_of(failed.begin(), failed.end(), [](double v) { return v > 0; })) {
      layers.push_back({"failed", "#000000", failed});
    }
    PlotAxes axes;
    axes.title = labels[r] + ": GPUs by activity";
    axes.x_label = "simulated time, s";
    axes.y_label = "GPUs";
    activity.push_back(stacked_area_svg(axes, t, bin, layers));

    PlotAxes strip_axes;
    strip_axes.title = labels[r] + ": gang phases";
    strip_axes.x_label = "simulated time, s";
    phases.push_back(
        strip_svg(strip_axes, t, bin,
                  {{"pending", "#ff7f0e", doubles(series["gang_s"]["pending"], 1 / bin)},
                   {"active", "#d62728", doubles(series["gang_s"]["active"], 1 / bin)}}));

    std::vector<PlotSeries> queue_series, kv_series;
    for (const auto& [model, values] : series["queued_by_model"].items()) {
      PlotSeries s{model, {}, false, false};
      const std::vector<double> v = doubles(values);
      for (size_t i = 0; i < t.size() && i < v.size(); ++i) s.points.emplace_back(t[i] + bin, v[i]);
      queue_series.push_back(std::move(s));
    }
    for (const auto& [model, values] : series["kv_used"].items()) {
      PlotSeries s{model, {}, false, false};
      const std::vector<double> v = doubles(values, 100.0);
      for (size_t i = 0; i < t.size() && i < v.size(); ++i) s.points.emplace_back(t[i] + bin, v[i]);
      kv_series.push_back(std::move(s));
    }
    PlotAxes queue_axes;
    queue_axes.title = labels[r] + ": queued requests";
    queue_axes.x_label = "simulated time, s";
    queue_axes.y_label = "requests queued";
    queues.push_back(line_chart_svg(queue_axes, queue_series));
    PlotAxes kv_axes;
    kv_axes.title = labels[r] + ": KV blocks in use";
    kv_axes.x_label = "simulated time, s";
    kv_axes.y_label = "% of KV blocks in use";
    kv_axes.y_min = 0;
    kv_axes.y_max = 100;
    kv.push_back(line_chart_svg(kv_axes, kv_series));
  }
  if (activity.empty()) return;
  report.heading("GPU time by activity", 3);
  report.plot_row(activity);
  report.heading("Gang phases (shade: share of each bin)", 3);
  report.plot_row(phases);
  report.heading("Queue depth per model", 3);
  report.plot_row(queues);
  report.heading("KV use per model (all its pools together)", 3);
  report.plot_row(kv);
}

std::optional<double> slo_share(const RequestStats& stats) {
  if (stats.arrived() == 0) return std::nullopt;
  return static_cast<double>(stats.slo_met()) / static_cast<double>(stats.arrived());
}

std::string percent_cell(std::optional<double> fraction) {
  return fraction ? fmt::format("{:.1f}%", 100 * *fraction) : "-";
}

}  // namespace

Duration report_series_bin(const Scenario& scenario) {
  const Duration span =
      scenario.duration + std::min<Duration>(scenario.drain_limit, scenario.duration / 2);
  const Duration bin = span / 200;
  return std::max<Duration>(bin, std::chrono::milliseconds(10));
}

std::string run_label(const PolicyRun& run, const std::vector<PolicyRun>& runs) {
  bool several_routings = false;
  for (const PolicyRun& other : runs) several_routings |= other.routing != runs.front().routing;
  std::string label = run.policy.name;
  if (run.policy.name == "gangway") label += "-" + run.mode;
  return several_routings ? label + "/" + run.routing : label;
}

HtmlReport simulation_report_html(const Scenario& scenario, const std::vector<PolicyRun>& runs,
                                  const std::vector<ReportTable>& tables) {
  HtmlReport report("gangway simulate: " + scenario.name);
  report.paragraph(fmt::format(
      "Seed {}, {} GPUs ({}), measured over {:.0f} s after a {:.0f} s warm-up. Gangway {}.",
      scenario.seed, scenario.node.gpu_count, scenario.node.hardware.name,
      to_seconds(scenario.duration - scenario.warmup), to_seconds(scenario.warmup),
      GANGWAY_VERSION));
  for (const ReportTable& table : tables) {
    report.heading(table.title);
    report.table(table.header, table.rows);
  }

  report.heading("Policies side by side");
  std::vector<std::string> header = {"policy", "goodput/s", "SLO"};
  for (const SloClass& slo : scenario.node.slo_classes) header.push_back("SLO " + slo.name);
  for (const ModelSpec& model : scenario.node.models) header.push_back("SLO " + model.name);
  header.push_back("GPU util");
  std::vector<std::vector<std::string>> rows;
  std::vector<Bar> goodput_bars, small_bars, large_bars;
  for (const PolicyRun& run : runs) {
    const RunMetrics& metrics = run.result.metrics;
    const double goodput = static_cast<double>(metrics.total().slo_met()) / run.result.measured_s;
    std::vector<std::string> row = {run_label(run, runs), fmt::format("{:.1f}", goodput),
                                    percent_cell(slo_share(metrics.total()))};
    for (const SloClass& slo : scenario.node.slo_classes) {
      row.push_back(percent_cell(slo_share(metrics.slo_class(slo.id))));
    }
    RequestStats small, large;
    for (const ModelSpec& model : scenario.node.models) {
      row.push_back(percent_cell(slo_share(metrics.model(model.id))));
      (model.is_large() ? large : small).merge(metrics.model(model.id));
    }
    const NodeTimeAccount& node = run.result.node_time;
    const double gpu_seconds = to_seconds(node.elapsed()) * node.gpu_count();
    const double busy = node.total_seconds(GpuActivity::kRunningSmall) +
                        node.total_seconds(GpuActivity::kRunningLarge);
    row.push_back(gpu_seconds > 0 ? fmt::format("{:.1f}%", 100 * busy / gpu_seconds) : "-");
    rows.push_back(row);
    goodput_bars.push_back({run_label(run, runs), goodput, {}, {}, ""});
    if (const auto a = slo_share(small)) {
      small_bars.push_back({run_label(run, runs), 100 * *a, {}, {}, ""});
    }
    if (const auto a = slo_share(large)) {
      large_bars.push_back({run_label(run, runs), 100 * *a, {}, {}, ""});
    }
  }
  report.table(header, rows);
  PlotAxes goodput_axes;
  goodput_axes.title = "Goodput (requests meeting their SLO per second)";
  goodput_axes.y_label = "requests/s";
  PlotAxes small_axes;
  small_axes.title = "SLO attainment, small models";
  small_axes.y_label = "% of arrivals";
  small_axes.y_max = 100;
  PlotAxes large_axes = small_axes;
  large_axes.title = "SLO attainment, large model";
  std::vector<std::string> bars = {bar_chart_svg(goodput_axes, goodput_bars)};
  if (!small_bars.empty()) bars.push_back(bar_chart_svg(small_axes, small_bars));
  if (!large_bars.empty()) bars.push_back(bar_chart_svg(large_axes, large_bars));
  report.plot_row(bars);

  std::vector<std::string> labels;
  std::vector<const PolicyRun*> pointers;
  for (const PolicyRun& run : runs) {
    labels.push_back(run_label(run, runs));
    pointers.push_back(&run);
  }
  report.heading("Latency distributions");
  std::vector<std::string> ttft, tpot;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::vector<TierClass> groups = tier_classes(scenario, runs[r].result.metrics);
    ttft.push_back(cdf_svg(labels[r] + ": TTFT", "time to first token", groups, true));
    tpot.push_back(cdf_svg(labels[r] + ": TPOT", "time per output token", groups, false));
  }
  report.heading("Time to first token (CDF per class and tier)", 3);
  report.plot_row(ttft);
  report.heading("Time per output token (CDF per class and tier)", 3);
  report.plot_row(tpot);
  if (!scenario.cluster) {
    report.heading("Over time");
    time_plots(report, pointers, labels);
  }
  return report;
}

}  // namespace gangway
