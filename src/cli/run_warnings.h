// Warnings on stderr about a run that worked but may not be what was meant: a model the trace
// sent nothing to, a timeline too large to open comfortably, a decode-pace reservation that
// cannot pace even one large sequence.
#pragma once

#include <ostream>
#include <string>

#include "config/scenario.h"
#include "metrics/run_metrics.h"

namespace gangway {

// Timelines above this size make Perfetto and chrome://tracing slow to load.
inline constexpr double kLargeTimelineBytes = 50e6;

// With a trace workload: names each model of the scenario that no request reached in the
// measured window (the trace mapping sends it no rows), and says how to map rows to it.
void warn_about_models_without_traffic(const Scenario& scenario, const RunMetrics& metrics,
                                       std::ostream& err);

// With policy.pace_reserve under `policy` (gangway, lease mode): says when the large model's
// guaranteed share of the node's time is below what pacing one lone large sequence at the
// tightest TPOT target takes, so that every large arrival of that class is turned away while the
// small models' demand fills the node, and which setting would make room for one.
void warn_if_pace_reserve_cannot_pace_one(const NodeSpec& node, const PolicySpec& policy,
                                          std::ostream& err);

// Says how to make a timeline file smaller when it is above kLargeTimelineBytes.
void warn_if_timeline_is_large(const std::string& path, std::ostream& err);

}  // namespace gangway
