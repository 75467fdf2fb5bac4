#include "sim/timeline_counters.h"

#include <nlohmann/json.hpp>

namespace gangway {

TimelineCounters::TimelineCounters(const NodeSpec& node, TimelineWriter& timeline,
                                   Duration min_interval)
    : timeline_(timeline), min_interval_(min_interval) {
  queues_.name = "queued requests";
  kv_.name = "KV blocks in use, %";
  for (const ModelSpec& model : node.models) queues_.keys.push_back(model.name);
  for (const ModelSpec& model : node.models) model_names_.push_back(model.name);
  queues_.written.assign(queues_.keys.size(), -1.0);
  queues_.current.assign(queues_.keys.size(), 0.0);
}

void TimelineCounters::sample(Time now, const Scheduler& scheduler) {
  const SchedulerState& state = scheduler.state();
  for (size_t m = 0; m < queues_.current.size() && m < state.queued_by_class.size(); ++m) {
    int64_t queued = 0;
    for (const int64_t n : state.queued_by_class[m]) queued += n;
    queues_.current[m] = static_cast<double>(queued);
  }
  if (kv_.keys.empty()) {  // pools are known once the scheduler has built them
    for (const Replica& replica : state.replicas) {
      kv_.keys.push_back("GPU " + std::to_string(replica.gpu.value()) + " " +
                         model_names_.at(replica.model.value()));
    }
    if (state.large) kv_.keys.push_back(model_names_.at(state.large->model.value()) + " (gang)");
    kv_.written.assign(kv_.keys.size(), -1.0);
    kv_.current.assign(kv_.keys.size(), 0.0);
  }
  size_t pool = 0;
  for (const Replica& replica : state.replicas) {
    if (pool < kv_.current.size()) kv_.current[pool++] = 100.0 * replica.kv.usage();
  }
  if (state.large && pool < kv_.current.size()) kv_.current[pool] = 100.0 * state.large->kv.usage();
  write_if_changed(queues_, now);
  write_if_changed(kv_, now);
}

void TimelineCounters::write_if_changed(Track& track, Time now) {
  if (track.current == track.written) return;
  if (track.ever_written && now - track.last_written < min_interval_) return;
  nlohmann::json values = nlohmann::json::object();
  for (size_t i = 0; i < track.keys.size(); ++i) values[track.keys[i]] = track.current[i];
  timeline_.counter(track.name, now, values);
  track.written = track.current;
  track.last_written = now;
  track.ever_written = true;
}

}  // namespace gangway
