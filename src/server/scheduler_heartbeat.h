// What GET /health reads on a network thread, without waiting for the scheduler loop's thread:
//  - a snapshot the loop publishes after every piece of work (live requests, draining);
//  - a ping: a probe that finds none out posts a no-op to the loop's thread, which answers it
//    when it gets there. While a ping has waited at least the stall limit, the loop counts as
//    stalled: its thread is stuck in one piece of work, gone, or so far behind that its queue
//    holds that much work. A busy loop that keeps turning is not stalled, however long its queue
//    is for a moment: probes answer at once during an overload burst.
// Every member is thread-safe (atomics).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace gangway {

class SchedulerHeartbeat {
 public:
  using Clock = std::chrono::steady_clock;

  // The loop's thread, after each piece of work.
  void publish(int64_t live_requests, bool draining) {
    live_requests_.store(live_requests, std::memory_order_relaxed);
    draining_.store(draining, std::memory_order_relaxed);
  }

  struct Reading {
    int64_t live_requests = 0;
    bool draining = false;
    bool ping_out = false;            // a ping waits for the loop
    Clock::duration ping_waiting{0};  // for this long
  };
  Reading read(Clock::time_point now) const {
    Reading reading;
    reading.live_requests = live_requests_.load(std::memory_order_relaxed);
    reading.draining = draining_.load(std::memory_order_relaxed);
    const int64_t sent = ping_sent_.load(std::memory_order_acquire);
    if (sent != kNoPing) {
      reading.ping_out = true;
      reading.ping_waiting =
          std::max(Clock::duration(0), now.time_since_epoch() - Clock::duration(sent));
    }
    return reading;
  }

  // True when no ping was out: the caller posts one to the loop's thread, which calls pong().
  bool start_ping(Clock::time_point now) {
    int64_t none = kNoPing;
    const int64_t sent = std::max<int64_t>(now.time_since_epoch().count(), kNoPing + 1);
    return ping_sent_.compare_exchange_strong(none, sent, std::memory_order_acq_rel);
  }
  void pong() { ping_sent_.store(kNoPing, std::memory_order_release); }

 private:
  static constexpr int64_t kNoPing = 0;
  std::atomic<int64_t> live_requests_{0};
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> ping_sent_{kNoPing};  // steady clock ticks when the ping was posted
};

}  // namespace gangway
