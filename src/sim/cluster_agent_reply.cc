#include "sim/cluster_agent_reply.h"

#include <algorithm>
#include <cmath>

#include "sched/admission/overload_ladder.h"

namespace gangway {
namespace {

// The factor on the weight at each rung of the overload ladder, lowest rung first. A rung is
// entered only after the pressure stayed above its threshold for a while and left only after it
// stayed well below, so the factor carries what the instantaneous wait does not: the node has
// been overloaded for some time and is turning requests away.
constexpr double kLadderFactor[kOverloadLevels] = {1.0, 0.8, 0.6, 0.4, 0.2, 0.1};

// The mean extra wait of a small-model request arriving uniformly within [0, horizon] from now
// because of a gang lease that holds the GPUs over [start, start + length] (seconds from now):
// an arrival at t inside the lease waits until its end.
double lease_penalty_s(double start, double length, double horizon) {
  if (horizon <= 0 || length <= 0) return 0;
  const double from = std::max(0.0, start);
  const double to = std::min(horizon, start + length);
  if (to <= from) return 0;
  const double end = start + length;
  return (end * (to - from) - (to * to - from * from) / 2) / horizon;
}

}  // namespace

double ladder_weight_factor(const std::string& level) {
  for (int i = 0; i < kOverloadLevels; ++i) {
    if (level == to_string(static_cast<OverloadLevel>(i))) return kLadderFactor[i];
  }
  return 1.0;
}

double agent_weight_fraction(const LoadReport& report, const AgentReplyOptions& options) {
  const double target_ms = report.ttft_target_ms > 0 ? report.ttft_target_ms : 200.0;
  // Only a pending lease adds to the small models' wait: an active one is already in their
  // predicted wait (the gang holds their GPUs until it ends).
  double penalty_ms = 0;
  if (report.gang_phase == "pending" && report.lease_start_s) {
    const double start = *report.lease_start_s - to_seconds(report.at);
    penalty_ms =
        1e3 * lease_penalty_s(start, report.lease_expected_ms / 1e3, to_seconds(options.horizon));
  }
  double weighted = 0;
  double total = 0;
  for (const ModelLoad& model : report.models) {
    const double weight = 1.0 + static_cast<double>(model.queued + model.running);
    double share = 0;
    if (model.has_capacity) {
      const double wait_ms = model.promised_wait_ms + (model.tier == "small" ? penalty_ms : 0.0);
      // The pressure: the wait in units of the target. A node that turned arrivals away just
      // now is at its limit whatever its queue shows (it only queues what it can serve).
      double pressure = wait_ms / target_ms;
      if (model.headroom_rps <= 0) pressure = std::max(pressure, 1.0);
      share = 1.0 / (1.0 + pressure * pressure);
    }
    weighted += weight * share;
    total += weight;
  }
  if (total <= 0) return 0;
  return weighted / total * ladder_weight_factor(report.overload_level);
}

AgentReply agent_reply(const LoadReport& report, bool draining, const AgentReplyOptions& options) {
  AgentReply reply;
  if (draining) {
    reply.state = AgentReply::State::kDrain;
    reply.weight_percent = 0;
    return reply;
  }
  const bool any_capacity = std::any_of(report.models.begin(), report.models.end(),
                                        [](const ModelLoad& m) { return m.has_capacity; });
  if (!any_capacity) {
    reply.state = AgentReply::State::kDown;
    reply.weight_percent = 0;
    reply.reason = "no capacity: no model can run on this node now";
    return reply;
  }
  const int floor = std::clamp(options.min_weight_percent, 1, 100);
  const auto percent =
      static_cast<int>(std::lround(100.0 * agent_weight_fraction(report, options)));
  reply.weight_percent = std::clamp(percent, floor, 100);
  return reply;
}

std::string agent_line(const AgentReply& reply) {
  switch (reply.state) {
    case AgentReply::State::kReady:
      return "ready " + std::to_string(reply.weight_percent) + "%\n";
    case AgentReply::State::kDrain:
      return "drain\n";
    case AgentReply::State::kDown:
      return "ready down #" + reply.reason + "\n";
  }
  return "\n";
}

}  // namespace gangway
