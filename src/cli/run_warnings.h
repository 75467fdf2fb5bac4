// Warnings on stderr about a run that worked but may not be what was meant: a model the trace
// sent nothing to, a timeline too large to open comfortably.
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

// Says how to make a timeline file smaller when it is above kLargeTimelineBytes.
void warn_if_timeline_is_large(const std::string& path, std::ostream& err);

}  // namespace gangway
