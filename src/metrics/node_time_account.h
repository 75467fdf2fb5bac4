// Where the node's GPU-time went: integrates each GPU's activity (running SM, running LM, gang
// barrier, idle while work waits, idle, failed) over time.
//
// Why: the gang policies are judged by utilisation and by the GPU-time they lose to gang barriers
// and to idling while work is queued (target: under 3 % together). The driver reports the state of
// every GPU right after each event; this account attributes the interval since the previous report
// to the state given then. It is told the time and never reads a clock.
//
// Usage: construct at the run's start time (every GPU starts kIdle), call observe(now, state)
// after every event with the state right after that event, and observe() or advance() once at the
// end time before reading. observe() runs after every simulator event: it is one pass over the
// GPUs with no allocation. Time is kept as integer nanoseconds, so sums are exact. Not
// thread-safe.
//
// JSON (to_json): fractions of total GPU-time (gpu_count x elapsed), null when no time elapsed:
//   {"gpu_count","elapsed_s","gpu_seconds",
//    "gpu_utilization": (running small + running large) / (GPU-time not failed),
//    "sm_busy_fraction","lm_busy_fraction","gang_barrier_fraction","idle_while_waiting_fraction",
//    "idle_fraction","failed_fraction",
//    "lost_fraction": gang barrier + idle while waiting (the policy's avoidable loss),
//    "seconds": {activity name: GPU-seconds},
//    "per_gpu": [{"gpu", the same fractions and gpu_utilization for that GPU's elapsed time}]}
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <vector>

#include "core/gpu_activity.h"
#include "core/ids.h"
#include "core/time.h"

namespace gangway {

class NodeTimeAccount {
 public:
  // Throws std::invalid_argument when gpu_count < 1.
  NodeTimeAccount(int gpu_count, Time start);

  // Attributes [last observed time, now) on each GPU to the activity it was given at the previous
  // call (kIdle before the first), then makes `activities` (one per GPU, by GpuId value) current.
  // Throws std::invalid_argument if activities.size() != gpu_count and std::logic_error if now is
  // before the last observed time.
  void observe(Time now, std::span<const GpuActivity> activities) {
    if (activities.size() != current_.size()) throw_wrong_gpu_count(activities.size());
    advance(now);
    for (std::size_t gpu = 0; gpu < current_.size(); ++gpu) current_[gpu] = activities[gpu];
  }

  // Attributes [last observed time, now) to the current activities without changing them (for
  // the end of a run).
  void advance(Time now) {
    if (now < last_observed_) throw_time_went_back(now);
    const int64_t elapsed_ns = (now - last_observed_).count();
    int64_t* row = ns_by_gpu_activity_.data();
    for (std::size_t gpu = 0; gpu < current_.size(); ++gpu, row += kGpuActivityCount) {
      row[static_cast<std::size_t>(current_[gpu])] += elapsed_ns;
    }
    last_observed_ = now;
  }

  int gpu_count() const { return static_cast<int>(current_.size()); }
  Time start() const { return start_; }
  Time last_observed() const { return last_observed_; }
  Duration elapsed() const { return last_observed_ - start_; }
  GpuActivity current(GpuId gpu) const;

  // Exact time one GPU spent in an activity, and the sum over all GPUs.
  Duration duration(GpuId gpu, GpuActivity activity) const;
  Duration total_duration(GpuActivity activity) const;
  double seconds(GpuId gpu, GpuActivity activity) const {
    return to_seconds(duration(gpu, activity));
  }
  double total_seconds(GpuActivity activity) const { return to_seconds(total_duration(activity)); }

  nlohmann::json to_json() const;

 private:
  [[noreturn]] void throw_wrong_gpu_count(std::size_t given) const;
  [[noreturn]] void throw_time_went_back(Time now) const;
  std::size_t checked_gpu(GpuId gpu) const;

  Time start_;
  Time last_observed_;
  std::vector<GpuActivity> current_;         // one per GPU
  std::vector<int64_t> ns_by_gpu_activity_;  // gpu * kGpuActivityCount + activity
};

}  // namespace gangway
