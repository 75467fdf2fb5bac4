#include "cli/simulation_report.h"

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
    const size_t id = model.id.value();
    for (int m = 0; m < kPreemptionModes; ++m) {
      // A request-level run has no KV account of its own: zeros.
      const PreemptionCounters c = id < kv.stats.preemptions_by_model.size()
                                       ? kv.stats.preemptions_by_model[id][m]
                                       : PreemptionCounters{};
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
                         {"seed", run.seed},
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
  if (run.engines) {
    const EngineRunReport& engines = *run.engines;
    json["engines"] = {{"tier_mode", engines.tier_mode},
                       {"engines", engines.engines},
                       {"tier_switches", engines.tier_switches},
                       {"pauses", engines.pauses},
                       {"resumes", engines.resumes},
                       {"switch_latency_ms", engines.switch_latency_ms},
                       {"pause_latency_ms", engines.pause_latency_ms},
                       {"resume_latency_ms", engines.resume_latency_ms}};
  }
  if (result.series) json["series"] = result.series->to_json();
  return json;
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

}  // namespace gangway
