// The real-time drivers' clock: the steady clock read as core Time (integer nanoseconds since
// the moment the clock was made), and the other way round for arming timers.
//
// Why: the scheduler core never reads a clock; its driver stamps every event. A server's driver
// stamps them from this, so that every thread (network and scheduler) agrees on one epoch and
// Time values taken on different threads compare. Steady, so that wall-clock adjustments never
// move time backwards. Copyable and thread-safe (const after construction).
#pragma once

#include <chrono>

#include "core/time.h"

namespace gangway {

class WallClock {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  WallClock() : epoch_(std::chrono::steady_clock::now()) {}

  Time now() const { return from_steady(std::chrono::steady_clock::now()); }
  Time from_steady(SteadyTime t) const {
    return Time::from_ns(std::chrono::duration_cast<Duration>(t - epoch_).count());
  }
  SteadyTime to_steady(Time t) const { return epoch_ + t.since_epoch(); }
  SteadyTime epoch() const { return epoch_; }

 private:
  SteadyTime epoch_;
};

}  // namespace gangway
