#include "sched/request_level/tier_lease_planner.h"

#include <algorithm>

namespace gangway {

const char* to_string(EngineTier tier) {
  return tier == EngineTier::kLarge ? "large" : "small";
}

Duration TierLeasePlanner::hold(EngineTier tier) const {
  const Duration base = tier == EngineTier::kLarge ? options_.large_hold : options_.small_hold;
  const auto floor = Duration(static_cast<int64_t>(static_cast<double>(switch_latency_.count()) *
                                                   options_.holds_per_switch));
  return std::max(base, floor);
}

void TierLeasePlanner::observe_switch(Duration latency) {
  if (latency < Duration::zero()) latency = Duration::zero();
  if (!observed_) {
    switch_latency_ = latency;
    observed_ = true;
    return;
  }
  // A quarter of the weight on the newest switch: follows a change within a few switches.
  switch_latency_ = Duration((switch_latency_.count() * 3 + latency.count()) / 4);
}

TierDecision TierLeasePlanner::decide(EngineTier holder, Time held_since, const TierBacklog& small,
                                      const TierBacklog& large, Time now) const {
  const TierBacklog& mine = holder == EngineTier::kSmall ? small : large;
  const TierBacklog& theirs = holder == EngineTier::kSmall ? large : small;
  TierDecision decision;
  // A holder with no engine left gives the GPUs back to the other tier if it can run.
  if (!mine.available) {
    decision.hand_over = theirs.available;
    return decision;
  }
  if (!theirs.available || !theirs.has_work()) return decision;
  if (!mine.has_work()) {
    decision.hand_over = true;
    return decision;
  }
  const Time hold_end = held_since + hold(holder);
  if (now >= hold_end) {
    decision.hand_over = true;
    return decision;
  }
  decision.ask_again = hold_end;
  // Aging: the large model's oldest request still without its first token pulls its tier's turn
  // forward, queued or dispatched just before its engine was paused.
  if (holder == EngineTier::kSmall && large.oldest_waiting_arrival) {
    const Time aged = *large.oldest_waiting_arrival + options_.max_large_wait;
    if (now >= aged) {
      decision.hand_over = true;
      return decision;
    }
    decision.ask_again = std::min(decision.ask_again, aged);
  }
  return decision;
}

}  // namespace gangway
