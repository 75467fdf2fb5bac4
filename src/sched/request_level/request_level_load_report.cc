#include "sched/request_level/request_level_load_report.h"

#include <algorithm>

#include "sched/admission/overload_ladder.h"

namespace gangway {
namespace {

EngineTier other(EngineTier tier) {
  return tier == EngineTier::kSmall ? EngineTier::kLarge : EngineTier::kSmall;
}

// When the holder hands the GPUs over if nothing else happens: at once when it has no work, at
// the end of its hold, or (the small tier) when the large tier's oldest request, or one arriving
// now, has waited max_large_wait.
Time predicted_hand_over(const RequestLevelCore& core, Time now) {
  const EngineTier holder = core.holder();
  const TierBacklog mine = core.backlog(holder);
  if (!mine.has_work()) return now;
  Time at = core.held_since() + core.planner().hold(holder);
  if (holder == EngineTier::kSmall) {
    const TierBacklog large = core.backlog(EngineTier::kLarge);
    const Time oldest = large.oldest_queued_arrival.value_or(now);
    at = std::min(at, oldest + core.options().tiers.max_large_wait);
  }
  return std::max(at, now);
}

// How long until `tier` holds the GPUs (0 while it does).
Duration wait_for_tier(const RequestLevelCore& core, EngineTier tier, Time now) {
  const Duration latency = core.switch_latency();
  if (core.switching()) {
    const Time switched = std::max(now, core.switch_started() + latency);
    if (core.holder() != tier) return switched - now;
    // Handing the GPUs away: back after the other tier's hold and a second switch.
    return switched - now + core.planner().hold(other(tier)) + latency;
  }
  if (core.holder() == tier) return Duration(0);
  return predicted_hand_over(core, now) - now + latency;
}

}  // namespace

LoadReport compute_load_report(const RequestLevelCore& core, Time now) {
  const NodeSpec& node = core.node();
  LoadReport report;
  report.at = now;
  report.live_requests = static_cast<int64_t>(core.live_requests());
  report.overload_level = to_string(OverloadLevel::kNormal);
  const double target_s = tightest_ttft_target_s(node);
  report.ttft_target_ms = target_s * 1e3;

  // The large tier as a gang lease.
  const bool large_holds = core.holder() == EngineTier::kLarge;
  const TierBacklog large = core.backlog(EngineTier::kLarge);
  if (large_holds) {
    report.gang_phase = "active";
    report.gang_since_s = to_seconds(core.held_since());
    report.lease_start_s = report.gang_since_s;
  } else if (core.switching() || large.queued > 0) {
    report.gang_phase = "pending";
    report.gang_since_s = to_seconds(core.switching() ? core.switch_started()
                                                      : large.oldest_queued_arrival.value_or(now));
    report.lease_start_s = to_seconds(now + wait_for_tier(core, EngineTier::kLarge, now));
  } else {
    report.gang_phase = "off";
  }
  if (report.lease_start_s)
    report.lease_expected_ms = to_ms(core.planner().hold(EngineTier::kLarge));

  for (const ModelSpec& model : node.models) {
    ModelLoad load;
    load.model = model.name;
    load.tier = to_string(model.tier);
    int64_t promised_queued = 0;  // queued in classes with a TTFT target
    bool any_target = false;
    for (const SloClass& slo : node.slo_classes) {
      ClassLoad class_load;
      class_load.slo_class = slo.name;
      class_load.queued = core.queued(model.id, slo.id);
      class_load.running = core.running(model.id, slo.id);
      load.queued += class_load.queued;
      load.running += class_load.running;
      if (slo.ttft_target) {
        promised_queued += class_load.queued;
        any_target = true;
      }
      load.classes.push_back(class_load);
    }
    if (!any_target) promised_queued = load.queued;
    // The healthy engines' concurrency: sequences at most, or as many requests of the running
    // ones' mean reservation as their KV holds, whichever is fewer.
    double reserved = 0;
    double capacity = 0;
    int64_t running = 0;
    for (const EngineSlot& engine : core.engines()) {
      if (engine.descriptor.model != model.id || !engine.healthy) continue;
      reserved += static_cast<double>(engine.reserved_tokens);
      capacity += static_cast<double>(engine.descriptor.kv_capacity_tokens);
      running += static_cast<int64_t>(engine.running.size());
    }
    const double mean_reserve = running > 0 ? reserved / static_cast<double>(running) : 0.0;
    double slots = 0;
    for (const EngineSlot& engine : core.engines()) {
      if (engine.descriptor.model != model.id || !engine.healthy) continue;
      double fit = engine.descriptor.max_num_seqs;
      if (mean_reserve > 0) {
        fit =
            std::min(fit, std::max(1.0, static_cast<double>(engine.descriptor.kv_capacity_tokens) /
                                            mean_reserve));
      }
      slots += fit;
    }
    load.has_capacity = slots > 0;
    load.kv_usage = capacity > 0 ? reserved / capacity : 0.0;
    const double service_s =
        to_seconds(core.mean_service(model.id).value_or(kUnmeasuredServiceTime));
    const EngineTier tier = model.is_large() ? EngineTier::kLarge : EngineTier::kSmall;
    double wait_s = to_seconds(wait_for_tier(core, tier, now));
    double promised_wait_s = wait_s;
    if (load.has_capacity) {
      // The queue ahead of a new request, past the free places, at the completion rate.
      const double free = slots - static_cast<double>(running);
      const double ahead = static_cast<double>(load.queued + 1) - free;
      if (ahead > 0) wait_s += ahead * service_s / slots;
      const double promised_ahead = static_cast<double>(promised_queued + 1) - free;
      if (promised_ahead > 0) promised_wait_s += promised_ahead * service_s / slots;
      const double completion_rps = service_s > 0 ? slots / service_s : slots;
      load.headroom_rps = std::max(0.0, target_s - wait_s) * completion_rps / target_s;
    }
    load.predicted_wait_ms = wait_s * 1e3;
    load.promised_wait_ms = promised_wait_s * 1e3;
    report.overload_pressure = std::max(report.overload_pressure, wait_s / target_s);
    report.models.push_back(std::move(load));
  }
  return report;
}

}  // namespace gangway
