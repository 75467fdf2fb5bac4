// A time series of one run, for measuring how a node recovers after a burst: the whole run
// (warm-up and drain included) cut into bins of fixed width. Requests count in the bin of their
// arrival (per SLO class: arrived, rejected, got a first token, first token within the class's
// TTFT target, met the SLO); queued and live requests are sampled after every event (the last
// sample in a bin is its value at the bin's end, `queued_max` the most seen in it). On a single
// node, sample_node() adds what the HTML report draws: GPU-time by activity and time in each gang
// phase (integrated over the bin), and per model the queued requests and the share of its KV
// blocks in use (at the bin's end). Memory grows with the run's length over the bin width, not
// with the number of requests.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu_activity.h"
#include "core/node_spec.h"
#include "core/outcome.h"
#include "sched/scheduler.h"
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
  // The node's state right after an event at `now` (GPU activities, gang phase, queues, KV).
  void sample_node(Time now, const Scheduler& scheduler);

  // {"bin_s", "t_s": [bin starts], "queued", "queued_max", "live",
  //  "classes": {CLASS: {"arrived", "rejected", "first_token", "ttft_on_target", "slo_met"}}},
  // every leaf a list with one number per bin; with sample_node() also
  //  "gpu_s": {ACTIVITY: GPU-seconds}, "gang_s": {"pending", "active": seconds},
  //  "queued_by_model": {MODEL: requests}, "kv_used": {MODEL: share of its KV blocks in use}.
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
    std::array<int64_t, kGpuActivityCount> gpu_ns{};
    std::array<int64_t, 2> gang_ns{};  // pending, active
    std::vector<int64_t> queued_by_model;
    std::vector<double> kv_used;
  };
  Bin& bin_at(Time time);
  // Adds [from, to) x weight to the bins it covers, into the counter `field` picks.
  template <typename Field>
  void integrate(Time from, Time to, int64_t weight, Field field);

  std::vector<SloClass> classes_;  // the node's, by SloClassId value
  Duration bin_;
  std::vector<Bin> bins_;
  int64_t last_queued_ = 0;
  int64_t last_live_ = 0;
  // sample_node()'s state since its last call.
  std::vector<std::string> model_names_;
  bool node_sampled_ = false;
  Time last_node_sample_;
  std::array<int64_t, kGpuActivityCount> gpus_by_activity_{};
  GangPhase gang_phase_ = GangPhase::kOff;
  std::vector<int64_t> last_queued_by_model_;
  std::vector<double> last_kv_used_;
  std::vector<GpuActivity> activities_;  // scratch
  std::vector<int64_t> scratch_used_;
  std::vector<int64_t> scratch_capacity_;
};

// Requests queued on the node (every model and class).
int64_t queued_requests(const SchedulerState& state);

}  // namespace gangway
