#include "sched/load_report.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace gangway {

namespace {

constexpr Duration kNoHeadroomAfterRejection = std::chrono::seconds(1);

const char* phase_name(GangPhase phase) {
  switch (phase) {
    case GangPhase::kOff:
      return "off";
    case GangPhase::kPending:
      return "pending";
    case GangPhase::kActive:
      return "active";
  }
  return "?";
}

// Scheduler::has_capacity, from the state alone: the large model needs every GPU, a small model
// one healthy replica.
bool model_has_capacity(const SchedulerState& state, const ModelSpec& model) {
  const auto healthy = [&](uint32_t gpu) { return !state.gpus[gpu].failed; };
  if (model.is_large()) {
    for (uint32_t gpu = 0; gpu < state.gpus.size(); ++gpu) {
      if (!healthy(gpu)) return false;
    }
    return true;
  }
  for (uint32_t index : state.small_models[model.id.value()].replicas) {
    if (healthy(state.replicas[index].gpu.value())) return true;
  }
  return false;
}

// The prompt tokens still to prefill of `model`'s queued requests in classes with a TTFT
// target, over all its queues (the large model's; a small model's shared queue and each
// replica's own); `all_queued` where no class has a target.
double promised_queued_tokens(const SchedulerState& state, const ModelSpec& model,
                              double all_queued) {
  int64_t tokens = 0;
  bool any_target = false;
  for (const SloClass& slo : state.node->slo_classes) {
    if (!slo.ttft_target) continue;
    any_target = true;
    if (model.is_large()) {
      tokens += state.large->queue.queued_tokens(slo.id);
      continue;
    }
    const SmallModelRuntime& runtime = state.small_models[model.id.value()];
    tokens += runtime.queue.queued_tokens(slo.id);
    for (uint32_t index : runtime.replicas)
      tokens += state.replicas[index].queue.queued_tokens(slo.id);
  }
  return any_target ? static_cast<double>(tokens) : all_queued;
}

}  // namespace

double tightest_ttft_target_s(const NodeSpec& node) {
  double target_s = 0.2;
  bool any_target = false;
  for (const SloClass& slo : node.slo_classes) {
    if (slo.ttft_target && (!any_target || to_seconds(*slo.ttft_target) < target_s)) {
      target_s = to_seconds(*slo.ttft_target);
      any_target = true;
    }
  }
  return target_s;
}

LoadReport compute_load_report(const SchedulerState& state, Time now) {
  LoadReport report;
  report.at = now;
  report.gang_phase = phase_name(state.gang.phase);
  if (state.gang.phase == GangPhase::kPending) {
    report.gang_since_s = to_seconds(state.gang.pending_since);
  } else if (state.gang.phase == GangPhase::kActive) {
    report.gang_since_s = to_seconds(state.gang.active_since);
  }
  report.live_requests = state.live_sequences;
  report.overload_level = to_string(state.overload.level);
  report.overload_pressure = state.overload.pressure;
  report.large_weight_factor = state.overload.large_weight_factor;
  if (state.gang.phase == GangPhase::kActive) {
    report.lease_start_s = to_seconds(state.gang.active_since);
  } else if (state.gang.phase == GangPhase::kPending) {
    report.lease_start_s = to_seconds(state.gang_barrier(now));
  }
  if (report.lease_start_s) report.lease_expected_ms = to_ms(state.gang.typical_phase);
  const double target_s = tightest_ttft_target_s(*state.node);
  report.ttft_target_ms = target_s * 1e3;
  // A node that turned arrivals away lately queues only what it can serve, so its queue alone
  // looks short: without this its headroom would keep drawing the traffic it rejects.
  const bool turned_away_recently =
      state.overload.last_busy_rejection &&
      now - *state.overload.last_busy_rejection < kNoHeadroomAfterRejection;
  const NodeSpec& node = *state.node;
  for (const ModelSpec& model : node.models) {
    ModelLoad load;
    load.model = model.name;
    load.tier = to_string(model.tier);
    const size_t m = model.id.value();
    for (const SloClass& slo : node.slo_classes) {
      ClassLoad class_load;
      class_load.slo_class = slo.name;
      class_load.queued = state.queued_by_class[m][slo.id.value()];
      class_load.running = state.running_by_class[m][slo.id.value()];
      load.queued += class_load.queued;
      load.running += class_load.running;
      load.classes.push_back(class_load);
    }
    // Queued prompt tokens ahead, spread over the model's engines, at prefill speed; plus the
    // time the gang holds the GPUs (small models) or until the gang can start (large model).
    const CostModel* cost = model.is_large() ? state.large->cost : state.small_models[m].cost;
    const double engines =
        model.is_large() ? 1.0 : std::max<size_t>(1, state.small_models[m].replicas.size());
    const double seconds_per_token = lone_chunk_prefill_seconds_per_token(*cost, model);
    const double queued_tokens = static_cast<double>(state.queued_prompt_tokens[m]);
    const double promised_tokens = promised_queued_tokens(state, model, queued_tokens);
    double wait_s = seconds_per_token * queued_tokens / engines;
    double promised_wait_s = seconds_per_token * promised_tokens / engines;
    double blocked_s = 0;
    if (model.is_large()) {
      if (state.gang.phase != GangPhase::kActive) {
        blocked_s = to_seconds(state.gang_barrier(now) - now);
      }
      load.kv_usage = state.large->kv.usage();
    } else {
      if (state.gang.phase == GangPhase::kActive && state.large) {
        blocked_s = to_seconds(std::max(Duration(0), state.large->predicted_free - now));
      }
      double used = 0;
      double capacity = 0;
      for (uint32_t index : state.small_models[m].replicas) {
        used += static_cast<double>(state.replicas[index].kv.used_blocks());
        capacity += static_cast<double>(state.replicas[index].kv.capacity_blocks());
      }
      load.kv_usage = capacity > 0 ? used / capacity : 0.0;
    }
    wait_s += blocked_s;
    promised_wait_s += blocked_s;
    load.predicted_wait_ms = wait_s * 1e3;
    load.promised_wait_ms = promised_wait_s * 1e3;
    int64_t queued_requests = 0;
    for (const int64_t n : state.queued_by_class[m]) queued_requests += n;
    const double mean_prompt =
        queued_requests > 0 ? static_cast<double>(state.queued_prompt_tokens[m]) / queued_requests
                            : static_cast<double>(model.prefill_chunk_tokens);
    const double seconds_per_request = seconds_per_token * mean_prompt;
    load.headroom_rps = std::max(0.0, target_s - wait_s) * engines / seconds_per_request / target_s;
    load.has_capacity = model_has_capacity(state, model);
    if (turned_away_recently || !load.has_capacity) load.headroom_rps = 0;
    report.models.push_back(std::move(load));
  }
  return report;
}

nlohmann::json to_json(const LoadReport& report) {
  nlohmann::json models = nlohmann::json::object();
  for (const ModelLoad& load : report.models) {
    nlohmann::json classes = nlohmann::json::object();
    for (const ClassLoad& c : load.classes) {
      classes[c.slo_class] = {{"queued", c.queued}, {"running", c.running}};
    }
    models[load.model] = {{"tier", load.tier},
                          {"queued", load.queued},
                          {"running", load.running},
                          {"predicted_wait_ms", load.predicted_wait_ms},
                          {"promised_wait_ms", load.promised_wait_ms},
                          {"kv_usage", load.kv_usage},
                          {"headroom_rps", load.headroom_rps},
                          {"has_capacity", load.has_capacity},
                          {"classes", classes}};
  }
  nlohmann::json gang = {{"phase", report.gang_phase}};
  gang["since_s"] = report.gang_since_s ? nlohmann::json(*report.gang_since_s) : nlohmann::json();
  gang["lease_start_s"] =
      report.lease_start_s ? nlohmann::json(*report.lease_start_s) : nlohmann::json();
  gang["lease_expected_ms"] = report.lease_expected_ms;
  return {{"at_s", to_seconds(report.at)},
          {"live_requests", report.live_requests},
          {"ttft_target_ms", report.ttft_target_ms},
          {"models", models},
          {"gang", gang},
          {"overload",
           {{"level", report.overload_level},
            {"pressure", report.overload_pressure},
            {"large_weight_factor", report.large_weight_factor}}}};
}

}  // namespace gangway
