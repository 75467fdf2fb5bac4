// A node's GPU time inside the measurement window [warmup, duration): the simulators' drivers
// (NodeDriver, RequestLevelSimulator) tell it the GPUs' activities after each event, and it
// accounts the time between events to them, opening and closing the window on time.
#pragma once

#include <span>

#include "core/gpu_activity.h"
#include "core/time.h"
#include "metrics/node_time_account.h"

namespace gangway {

class MeasurementWindow {
 public:
  MeasurementWindow(int gpu_count, Duration warmup, Duration duration)
      : start_(Time::zero() + warmup),
        end_(Time::zero() + duration),
        open_(warmup <= Duration(0)),
        node_time_(gpu_count, start_) {}

  // Before an event at `time`: the activities since the last event held until the window's
  // start or end if the event passes it.
  void before_event(Time time, std::span<const GpuActivity> activities) {
    if (!open_ && time >= start_) {
      node_time_.observe(start_, activities);
      open_ = true;
    }
    if (!closed_ && time >= end_) {
      node_time_.observe(end_, activities);
      closed_ = true;
    }
  }
  // After an event at `now`: the GPUs' activities from now on.
  void after_event(Time now, std::span<const GpuActivity> activities) {
    if (open_ && !closed_) node_time_.observe(now, activities);
  }
  // The run is over: the GPUs kept their last activities until the window's end.
  void stop(std::span<const GpuActivity> activities) {
    if (!open_) node_time_.observe(start_, activities);
    if (!closed_) node_time_.observe(end_, activities);
    open_ = true;
    closed_ = true;
  }
  bool measured(Time arrival) const { return arrival >= start_; }
  NodeTimeAccount& node_time() { return node_time_; }

 private:
  Time start_;
  Time end_;
  bool open_;
  bool closed_ = false;
  NodeTimeAccount node_time_;
};

}  // namespace gangway
