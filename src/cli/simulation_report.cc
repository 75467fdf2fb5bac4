#include "cli/simulation_report.h"

#include <fmt/format.h>

namespace gangway {

namespace {

nlohmann::json run_json(const PolicyRun& run) {
  const SimulationResult& result = run.result;
  const double window_s = result.measured_s;
  nlohmann::json sim = {{"simulated_s", result.simulated_s},
                        {"measured_s", window_s},
                        {"wall_s", run.wall_s},
                        {"events", result.events},
                        {"requests", result.requests},
                        {"speedup", run.wall_s > 0 ? result.simulated_s / run.wall_s : 0.0},
                        {"gang_phases", result.gang_phases}};
  return {{"policy", run.policy.name},
          {"mode", run.mode},
          {"sim", sim},
          {"node", result.node_time.to_json()},
          {"classes", result.metrics.classes_json(window_s)},
          {"models", result.metrics.models_json(window_s)},
          {"total", result.metrics.total_json(window_s)}};
}

std::string ms(double value) {
  return fmt::format("{:.1f}", value);
}
std::string percent(double fraction) {
  return fmt::format("{:.1f}%", 100.0 * fraction);
}

double attainment(const RequestStats& stats) {
  return stats.arrived() == 0 ? 0.0 : static_cast<double>(stats.slo_met()) / stats.arrived();
}

}  // namespace

nlohmann::json simulation_report_json(const Scenario& scenario,
                                      const std::vector<PolicyRun>& runs) {
  nlohmann::json doc = {{"gangway_version", GANGWAY_VERSION},
                        {"scenario", scenario.name},
                        {"seed", scenario.seed},
                        {"runs", nlohmann::json::array()}};
  for (const PolicyRun& run : runs) doc["runs"].push_back(run_json(run));
  return doc;
}

void print_simulation_table(std::ostream& out, const Scenario& scenario,
                            const std::vector<PolicyRun>& runs) {
  out << fmt::format("scenario {}  seed {}  window {:.0f} s  gangway {}\n\n", scenario.name,
                     scenario.seed, to_seconds(scenario.duration), GANGWAY_VERSION);
  out << fmt::format("{:<16} {:>9} {:>10} {:>7} {:>12} {:>12} {:>12} {:>7} {:>8} {:>9} {:>8}\n",
                     "policy", "mode", "goodput/s", "SLO", "SM TTFT p99", "LM queue p99",
                     "LM queue max", "util", "barrier", "idle-wait", "wall s");
  const ModelSpec* large = scenario.node.large_model();
  for (const PolicyRun& run : runs) {
    const RunMetrics& metrics = run.result.metrics;
    const NodeTimeAccount& node = run.result.node_time;
    double sm_ttft_p99 = 0;
    for (const ModelSpec& model : scenario.node.models) {
      if (!model.is_large()) {
        sm_ttft_p99 = std::max(sm_ttft_p99, metrics.model(model.id).ttft_ms().quantile(0.99));
      }
    }
    const double lm_queue_p99 = large ? metrics.model(large->id).queue_ms().quantile(0.99) : 0;
    const double lm_queue_max = large ? metrics.model(large->id).queue_ms().max() : 0;
    const double gpu_seconds = to_seconds(node.elapsed()) * node.gpu_count();
    auto fraction = [&](GpuActivity activity) {
      return gpu_seconds > 0 ? node.total_seconds(activity) / gpu_seconds : 0.0;
    };
    const double busy = fraction(GpuActivity::kRunningSmall) + fraction(GpuActivity::kRunningLarge);
    out << fmt::format(
        "{:<16} {:>9} {:>10.1f} {:>7} {:>12} {:>12} {:>12} {:>7} {:>8} {:>9} {:>8.2f}\n",
        run.policy.name, run.mode,
        static_cast<double>(metrics.total().slo_met()) / run.result.measured_s,
        percent(attainment(metrics.total())), ms(sm_ttft_p99), ms(lm_queue_p99), ms(lm_queue_max),
        percent(busy), percent(fraction(GpuActivity::kGangBarrier)),
        percent(fraction(GpuActivity::kIdleWhileWaiting)), run.wall_s);
  }
  out << "\n(latencies in ms; SLO = requests meeting their class targets / arrived)\n";

  for (const PolicyRun& run : runs) {
    const RunMetrics& metrics = run.result.metrics;
    out << fmt::format("\n{} ({} mode)\n", run.policy.name, run.mode);
    out << fmt::format("  {:<14} {:>9} {:>9} {:>8} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
                       "group", "arrived", "completed", "rejected", "SLO", "queue p99", "TTFT p50",
                       "TTFT p99", "TPOT p50", "e2e p99");
    auto row = [&](const std::string& label, const RequestStats& stats) {
      if (stats.arrived() == 0) return;
      out << fmt::format("  {:<14} {:>9} {:>9} {:>8} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
                         label, stats.arrived(), stats.completed(), stats.rejected(),
                         percent(attainment(stats)), ms(stats.queue_ms().quantile(0.99)),
                         ms(stats.ttft_ms().quantile(0.5)), ms(stats.ttft_ms().quantile(0.99)),
                         ms(stats.tpot_ms().quantile(0.5)), ms(stats.e2e_ms().quantile(0.99)));
    };
    for (const SloClass& slo : scenario.node.slo_classes) {
      row("class " + slo.name, metrics.slo_class(slo.id));
    }
    for (const ModelSpec& model : scenario.node.models) row(model.name, metrics.model(model.id));
  }
}

}  // namespace gangway
