#include "cli/simulation_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "cli/simulation_cluster.h"

namespace gangway {

namespace {

nlohmann::json prefix_counters_json(const PrefixCacheCounters& counters) {
  return {{"requests", counters.requests},
          {"hit_requests", counters.hit_requests},
          {"request_hit_rate", counters.request_hit_rate()},
          {"prompt_tokens", counters.prompt_tokens},
          {"cached_tokens", counters.cached_tokens},
          {"host_cached_tokens", counters.host_tokens},
          {"token_hit_rate", counters.token_hit_rate()}};
}

// The KV layer's account (docs/cli.md lists the keys): prefix-cache hit rates per model and per
// GPU, preemption choices by model and by reason, the split, the host tier.
nlohmann::json kv_json(const Scenario& scenario, const KvRunReport& kv) {
  const NodeSpec& node = scenario.node;
  PrefixCacheCounters total;
  std::vector<PrefixCacheCounters> by_model(node.models.size());
  nlohmann::json pools = nlohmann::json::array();
  for (size_t id = 0; id < kv.pools.size() && id < kv.stats.pools.size(); ++id) {
    const KvRunReport::Pool& pool = kv.pools[id];
    const PrefixCacheCounters& counters = kv.stats.pools[id];
    total.add(counters);
    by_model[pool.model.value()].add(counters);
    nlohmann::json entry = prefix_counters_json(counters);
    entry["gpu"] = pool.gpu ? nlohmann::json(pool.gpu->value()) : nlohmann::json("all");
    entry["model"] = node.model(pool.model).name;
    entry["capacity_blocks"] = pool.capacity_blocks;
    entry["evicted_blocks"] = pool.evicted_blocks;
    pools.push_back(entry);
  }
  nlohmann::json models = nlohmann::json::object();
  for (const ModelSpec& model : node.models) {
    models[model.name] = prefix_counters_json(by_model[model.id.value()]);
  }
  nlohmann::json preemption_models = nlohmann::json::object();
  for (const ModelSpec& model : node.models) {
    nlohmann::json modes = nlohmann::json::object();
    for (int m = 0; m < kPreemptionModes; ++m) {
      const PreemptionCounters& c = kv.stats.preemptions_by_model[model.id.value()][m];
      modes[to_string(static_cast<PreemptionMode>(m))] = {{"count", c.count},
                                                          {"kv_tokens", c.kv_tokens},
                                                          {"victim_delay_s", c.victim_delay_s},
                                                          {"node_gpu_s", c.node_gpu_s}};
    }
    preemption_models[model.name] = modes;
  }
  nlohmann::json reasons = nlohmann::json::object();
  for (int r = 0; r < kPreemptionReasons; ++r) {
    nlohmann::json modes = nlohmann::json::object();
    for (int m = 0; m < kPreemptionModes; ++m) {
      modes[to_string(static_cast<PreemptionMode>(m))] = kv.stats.preemptions_by_reason[r][m];
    }
    reasons[to_string(static_cast<PreemptionReason>(r))] = modes;
  }
  return {{"prefix_cache",
           {{"total", prefix_counters_json(total)}, {"models", models}, {"pools", pools}}},
          {"preemption", {{"models", preemption_models}, {"reasons", reasons}}},
          {"split",
           {{"large_kv_fraction", kv.large_kv_fraction},
            {"lowest", kv.stats.large_kv_fraction_lowest},
            {"highest", kv.stats.large_kv_fraction_highest},
            {"moves_to_large", kv.stats.split_moves_to_large},
            {"moves_to_small", kv.stats.split_moves_to_small}}},
          {"host",
           {{"capacity_bytes", kv.host_capacity_bytes},
            {"peak_bytes", kv.stats.host_peak_bytes},
            {"kept_blocks", kv.host_kept_blocks},
            {"evicted_blocks", kv.host_evicted_blocks}}},
          {"steals", kv.stats.steals}};
}

// The output-length predictor's accuracy per model over the requests that completed (measured
// when each was first scheduled; warm-up included), and how exclusive-mode backfill
// reservations held (docs/cli.md lists the keys).
nlohmann::json prediction_json(const Scenario& scenario, const PolicyRun& run) {
  nlohmann::json models = nlohmann::json::object();
  for (const ModelSpec& model : scenario.node.models) {
    const size_t id = model.id.value();
    const PredictionAccuracy accuracy =
        id < run.prediction.size() ? run.prediction[id] : PredictionAccuracy{};
    models[model.name] = {
        {"samples", accuracy.samples},
        {"mean_actual_tokens", accuracy.mean_actual_tokens()},
        {"mean_abs_error_tokens", accuracy.mean_abs_error_tokens()},
        {"relative_error", accuracy.actual_tokens_sum > 0
                               ? accuracy.abs_error_tokens_sum / accuracy.actual_tokens_sum
                               : 0.0},
        {"mean_abs_error_s", accuracy.mean_abs_error_seconds()}};
  }
  const BackfillStats& backfill = run.backfill;
  return {
      {"oracle", run.oracle_output_lengths},
      {"models", models},
      {"backfill",
       {{"reservations", backfill.reservations},
        {"overruns", backfill.overruns},
        {"overrun_fraction", backfill.reservations > 0
                                 ? static_cast<double>(backfill.overruns) / backfill.reservations
                                 : 0.0},
        {"mean_overrun_ms",
         backfill.overruns > 0 ? 1e3 * backfill.overrun_s_sum / backfill.overruns : 0.0},
        {"max_overrun_ms", 1e3 * backfill.overrun_s_max},
        {"mean_early_ms", backfill.reservations > backfill.overruns
                              ? 1e3 * backfill.early_s_sum /
                                    static_cast<double>(backfill.reservations - backfill.overruns)
                              : 0.0}}}};
}

nlohmann::json admission_json(const PolicyRun& run) {
  const AdmissionCounters& counters = run.admission;
  nlohmann::json decisions = nlohmann::json::object();
  for (int r = 0; r < kReasonCount; ++r) {
    if (counters.decisions[r] > 0) {
      decisions[r == 0 ? "admitted" : to_string(static_cast<Reason>(r))] = counters.decisions[r];
    }
  }
  nlohmann::json entered = nlohmann::json::object();
  nlohmann::json time_s = nlohmann::json::object();
  for (int level = 0; level < kOverloadLevels; ++level) {
    const auto rung = static_cast<OverloadLevel>(level);
    entered[to_string(rung)] = run.ladder.entered(rung);
    time_s[to_string(rung)] = to_seconds(run.ladder.time_in(rung));
  }
  const double samples = static_cast<double>(std::max<int64_t>(1, counters.predictions));
  return {
      {"enabled", run.admission_enabled},
      {"decisions", decisions},
      {"downgraded", counters.downgraded},
      {"best_effort", counters.best_effort},
      {"capped_max_tokens", counters.capped_max_tokens},
      {"shed_from_queue", counters.shed_from_queue},
      {"ladder",
       {{"final_level", to_string(run.ladder.level())}, {"entered", entered}, {"time_s", time_s}}},
      {"weight_shift",
       {{"enabled", counters.weight_shift.enabled},
        {"max_factor", counters.weight_shift.max_factor},
        {"final_factor", counters.weight_shift.factor},
        {"peak_factor", counters.weight_shift.peak_factor},
        {"lowest_factor", counters.weight_shift.lowest_factor},
        {"shifts_toward_large", counters.weight_shift.shifts_toward_large},
        {"shifts_toward_small", counters.weight_shift.shifts_toward_small},
        {"time_toward_large_s", to_seconds(counters.weight_shift.time_toward_large)},
        {"time_toward_small_s", to_seconds(counters.weight_shift.time_toward_small)},
        {"large_risk", counters.weight_shift.large_risk},
        {"small_risk", counters.weight_shift.small_risk}}},
      {"ttft_prediction",
       {{"samples", counters.predictions},
        {"mean_error_ms", counters.prediction_error_ms_sum / samples},
        {"mean_abs_error_ms", counters.prediction_abs_error_ms_sum / samples}}}};
}

nlohmann::json run_json(const Scenario& scenario, const PolicyRun& run) {
  const SimulationResult& result = run.result;
  const double window_s = result.measured_s;
  nlohmann::json sim = {{"simulated_s", result.simulated_s},
                        {"measured_s", window_s},
                        {"wall_s", run.wall_s},
                        {"events", result.events},
                        {"requests", result.requests},
                        {"speedup", run.wall_s > 0 ? result.simulated_s / run.wall_s : 0.0},
                        {"gang_phases", result.gang_phases}};
  nlohmann::json json = {{"policy", run.policy.name},
                         {"mode", run.mode},
                         {"routing", run.routing},
                         {"kv", kv_json(scenario, run.kv)},
                         {"prediction", prediction_json(scenario, run)},
                         {"sim", sim},
                         {"node", result.node_time.to_json()},
                         {"classes", result.metrics.classes_json(window_s)},
                         {"models", result.metrics.models_json(window_s)},
                         {"model_classes", result.metrics.model_classes_json(window_s)},
                         {"admission", admission_json(run)},
                         {"total", result.metrics.total_json(window_s)}};
  if (run.cluster) json["cluster"] = cluster_json(run);
  if (result.series) json["series"] = result.series->to_json();
  return json;
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
  for (const PolicyRun& run : runs) doc["runs"].push_back(run_json(scenario, run));
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
  bool several_routings = false;
  for (const PolicyRun& run : runs) several_routings |= run.routing != runs.front().routing;
  // With several routing rules a run is "policy/routing".
  auto run_label = [&](const PolicyRun& run) {
    return several_routings ? run.policy.name + "/" + run.routing : run.policy.name;
  };
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
        run_label(run), run.mode,
        static_cast<double>(metrics.total().slo_met()) / run.result.measured_s,
        percent(attainment(metrics.total())), ms(sm_ttft_p99), ms(lm_queue_p99), ms(lm_queue_max),
        percent(busy), percent(fraction(GpuActivity::kGangBarrier)),
        percent(fraction(GpuActivity::kIdleWhileWaiting)), run.wall_s);
  }
  out << "\n(latencies in ms; SLO = requests meeting their class targets / arrived; SLO|adm = "
         "the same / admitted in their class)\n";
  out << fmt::format("\n{:<24} {:>14} {:>14} {:>10} {:>10} {:>10}\n", "prefix cache", "token hits",
                     "request hits", "pauses", "swaps", "recomputes");
  for (const PolicyRun& run : runs) {
    PrefixCacheCounters total;
    for (const PrefixCacheCounters& pool : run.kv.stats.pools) total.add(pool);
    std::array<int64_t, kPreemptionModes> modes{};
    for (const auto& model : run.kv.stats.preemptions_by_model) {
      for (int m = 0; m < kPreemptionModes; ++m) modes[m] += model[m].count;
    }
    out << fmt::format("{:<24} {:>14} {:>14} {:>10} {:>10} {:>10}\n",
                       run.policy.name + "/" + run.routing, percent(total.token_hit_rate()),
                       percent(total.request_hit_rate()), modes[0], modes[1], modes[2]);
  }

  for (const PolicyRun& run : runs) {
    const RunMetrics& metrics = run.result.metrics;
    out << fmt::format("\n{} ({} mode, routing {})\n", run.policy.name, run.mode, run.routing);
    out << fmt::format(
        "  {:<26} {:>9} {:>9} {:>8} {:>7} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "group",
        "arrived", "completed", "rejected", "SLO", "SLO|adm", "queue p99", "TTFT p50", "TTFT p99",
        "TPOT p50", "e2e p99");
    auto row = [&](const std::string& label, const RequestStats& stats) {
      if (stats.arrived() == 0) return;
      const std::string kept =
          stats.admitted() == 0 ? "-" : percent(stats.slo_attainment_admitted());
      out << fmt::format(
          "  {:<26} {:>9} {:>9} {:>8} {:>7} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}\n", label,
          stats.arrived(), stats.completed(), stats.rejected(), percent(attainment(stats)), kept,
          ms(stats.queue_ms().quantile(0.99)), ms(stats.ttft_ms().quantile(0.5)),
          ms(stats.ttft_ms().quantile(0.99)), ms(stats.tpot_ms().quantile(0.5)),
          ms(stats.e2e_ms().quantile(0.99)));
    };
    for (const SloClass& slo : scenario.node.slo_classes) {
      row("class " + slo.name, metrics.slo_class(slo.id));
    }
    for (const ModelSpec& model : scenario.node.models) row(model.name, metrics.model(model.id));
    for (const ModelSpec& model : scenario.node.models) {
      for (const SloClass& slo : scenario.node.slo_classes) {
        row(model.name + "/" + slo.name, metrics.model_class(model.id, slo.id));
      }
    }
  }
  print_cluster_table(out, runs);
}

}  // namespace gangway
