// Counter tracks for the GPU timeline: queue depth per model and KV use per pool, sampled from
// the scheduler's state after simulator events, beside the GPU tracks a person reads the
// schedule from (why a lease started, whether memory ran short).
//
// A counter is written when one of its values changed, at most once per `min_interval` of
// virtual time (queues change at every arrival), so the counters stay a small part of the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/node_spec.h"
#include "core/time.h"
#include "metrics/timeline_writer.h"
#include "sched/scheduler.h"

namespace gangway {

class TimelineCounters {
 public:
  TimelineCounters(const NodeSpec& node, TimelineWriter& timeline,
                   Duration min_interval = std::chrono::milliseconds(1));

  // The state right after an event at `now`.
  void sample(Time now, const Scheduler& scheduler);

 private:
  struct Track {
    std::string name;
    std::vector<std::string> keys;
    std::vector<double> written;
    std::vector<double> current;
    Time last_written;
    bool ever_written = false;
  };
  void write_if_changed(Track& track, Time now);

  TimelineWriter& timeline_;
  Duration min_interval_;
  Track queues_;  // one value per model
  Track kv_;      // one value per pool: small-model replicas, then the large model's
  std::vector<std::string> model_names_;
};

}  // namespace gangway
