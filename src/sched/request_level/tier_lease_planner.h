// When the GPUs change hands between the small models' engines and the large model's, in the
// request-level mode (engine processes batch by themselves; gangway decides which tier runs).
//
// The shape is that of the iteration-level gang leases (docs/gang-scheduling.md): while both
// tiers have work, the large tier holds the GPUs for `large_hold` and the small tier for
// `small_hold` (the policy's weights split the time), a large request never waits longer than
// `max_large_wait` for its tier, and a tier with no work hands over at once. What differs is the
// price of a switch: pausing and resuming engine processes takes milliseconds to tens of them,
// measured on every switch (observe_switch), so each hold is at least `holds_per_switch` times
// the measured switch latency and a switch never costs more than a small share of the time.
// Pure decisions; the core (request_level_core.h) carries them out.
#pragma once

#include <cstdint>
#include <optional>

#include "core/time.h"
#include "sched/request_level/request_level_effects.h"

namespace gangway {

struct TierLeaseOptions {
  Duration large_hold = std::chrono::milliseconds(150);
  Duration small_hold = std::chrono::milliseconds(900);
  Duration max_large_wait = std::chrono::milliseconds(1000);
  // Each hold lasts at least this many times the measured switch latency.
  double holds_per_switch = 10.0;
};

// One tier's queued and running requests at an instant (the iteration-level policies' TierDemand
// is a share of GPU time instead).
struct TierBacklog {
  int64_t queued = 0;
  int64_t running = 0;  // dispatched and not ended (held in place while paused, lease mode)
  std::optional<Time> oldest_queued_arrival;
  // The oldest arrival among the requests still waiting for their first token: queued, or
  // dispatched to an engine of the tier that has not produced it yet (held there while the tier
  // is paused). The large tier's aging bound counts from it; for the small tier only queued
  // requests are counted.
  std::optional<Time> oldest_waiting_arrival;
  // Some engine of the tier is healthy.
  bool available = true;

  bool has_work() const { return queued > 0 || running > 0; }
};

struct TierDecision {
  bool hand_over = false;
  // When the answer may change without another event (Time::max(): only on an event).
  Time ask_again = Time::max();
};

class TierLeasePlanner {
 public:
  explicit TierLeasePlanner(const TierLeaseOptions& options) : options_(options) {}

  // Whether `holder`, holding the GPUs since `held_since`, should hand them to the other tier.
  TierDecision decide(EngineTier holder, Time held_since, const TierBacklog& small,
                      const TierBacklog& large, Time now) const;

  // A completed switch took this long (from asking the first engine to the last one's answer).
  void observe_switch(Duration latency);
  // The measured switch latency (an exponentially weighted mean; zero before the first).
  Duration switch_latency() const { return switch_latency_; }
  // How long `tier` holds the GPUs while the other waits, at the measured switch latency.
  Duration hold(EngineTier tier) const;

 private:
  TierLeaseOptions options_;
  Duration switch_latency_{0};
  bool observed_ = false;
};

}  // namespace gangway
