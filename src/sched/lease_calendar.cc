#include "sched/lease_calendar.h"

#include <algorithm>

namespace gangway {

std::optional<LeaseCalendar> LeaseCalendar::of(const GangRuntime& gang, bool large_has_work,
                                               double share, Duration blackout, Time now) {
  if (!large_has_work || share < kLeastShare || gang.typical_phase <= Duration(0) ||
      gang.last_released <= Time::zero()) {
    return std::nullopt;
  }
  const Duration cycle = seconds_to_duration(to_seconds(gang.typical_phase) / share);
  const Duration gap = cycle - gang.typical_phase;
  // Off: the next lease is a gap after the last one ended. Pending or active: after this one.
  const Time next = gang.phase == GangPhase::kOff ? gang.last_released + gap : now + blackout + gap;
  return LeaseCalendar(std::max(next, now), cycle, gang.typical_phase);
}

Duration LeaseCalendar::delay_before(Time first_token) const {
  Duration added{0};
  Time start = next_start_;
  for (int lease = 0; lease < kMostLeases && first_token > start; ++lease) {
    first_token += length_;
    added += length_;
    start += cycle_;
  }
  return added;
}

}  // namespace gangway
