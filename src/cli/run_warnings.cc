#include "cli/run_warnings.h"

#include <fmt/format.h>

#include <filesystem>

namespace gangway {

void warn_about_models_without_traffic(const Scenario& scenario, const RunMetrics& metrics,
                                       std::ostream& err) {
  if (!scenario.trace) return;
  for (const ModelSpec& model : scenario.node.models) {
    if (metrics.model(model.id).arrived() > 0) continue;
    err << fmt::format(
        "gangway: warning: model '{}' received no requests from the trace {} (its mapping sends "
        "it no rows); add a rule for it to trace_mapping (or workload.trace.mapping), e.g. "
        "{{model: {}, share: 0.1}} before the catch-all rule (docs/scenario.md, trace mapping "
        "rules)\n",
        model.name, scenario.trace->path, model.name);
  }
}

void warn_if_timeline_is_large(const std::string& path, std::ostream& err) {
  std::error_code error;
  const auto bytes = std::filesystem::file_size(path, error);
  if (error || static_cast<double>(bytes) <= kLargeTimelineBytes) return;
  err << fmt::format(
      "gangway: warning: the timeline {} is {:.0f} MB; viewers get slow above about {:.0f} MB. "
      "Write a part of the run with --timeline-window START:END (seconds), e.g. "
      "--timeline-window 30:40\n",
      path, static_cast<double>(bytes) / 1e6, kLargeTimelineBytes / 1e6);
}

}  // namespace gangway
