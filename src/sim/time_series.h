// A time series of one run, for measuring how a node recovers after a burst: the whole run
// (warm-up and drain included) cut into bins of fixed width. Requests count in the bin of their
// arrival (per SLO class: arrived, rejected, got a first token, first token within the class's
// TTFT target, met the SLO); queued and live requests are sampled after every event (the last
// sample in a bin is its value at the bin's end, `queued_max` the most seen in it). Memory grows
// with the run's length over the bin width, not with the number of requests.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/node_spec.h"
#include "core/outcome.h"
#include "sched/scheduler_state.h"

namespace gangway {

class TimeSeries {
 public:
  // `bin` > 0.
  TimeSeries(const NodeSpec& node, Duration bin);

  void on_arrival(Time arrival, SloClassId slo_class);
  void on_finished(const RequestRecord& record);
  // The state right after an event at `now`.
  void sample(Time now, int64_t queued, int64_t live);

  // {"bin_s", "t_s": [bin starts], "queued", "queued_max", "live",
  //  "classes": {CLASS: {"arrived", "rejected", "first_token", "ttft_on_target", "slo_met"}}},
  // every leaf a list with one number per bin.
  nlohmann::json to_json() const;

 private:
  struct Counts {
    int64_t arrived = 0;
    int64_t rejected = 0;
    int64_t first_token = 0;
    int64_t ttft_on_target = 0;
    int64_t slo_met = 0;
  };
  struct Bin {
    int64_t queued = 0;
    int64_t queued_max = 0;
    int64_t live = 0;
    std::vector<Counts> classes;
  };
  Bin& bin_at(Time time);

  std::vector<SloClass> classes_;  // the node's, by SloClassId value
  Duration bin_;
  std::vector<Bin> bins_;
  int64_t last_queued_ = 0;
  int64_t last_live_ = 0;
};

// Requests queued on the node (every model and class).
int64_t queued_requests(const SchedulerState& state);

}  // namespace gangway
