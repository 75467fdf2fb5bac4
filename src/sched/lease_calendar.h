// The gang's coming leases as admission's promise mode (admission.keep_promises) counts them
// for a small-model newcomer. Under contention the gang takes a lease of about its typical
// length once per cycle, the cycle being that length over the gang's share of the node's time.
// A request whose first token would come after the next lease starts waits that lease out, and
// one more for each further cycle its wait then spans. The mean share's stretch of the work
// ahead predicts the expected wait; a promise is judged on its own request, and a whole lease
// landing in its wait is what breaks it. Built once per arrival from the gang's state; pure.
#pragma once

#include <optional>

#include "core/time.h"
#include "sched/scheduler_state.h"

namespace gangway {

class LeaseCalendar {
 public:
  // Below this share of time the gang is not contending: no calendar.
  static constexpr double kLeastShare = 0.01;
  // Leases counted at most before one first token.
  static constexpr int kMostLeases = 16;

  // None when no lease is to be expected: the large model has no work, or the gang has no
  // contended history yet (no release, no typical length, a share below kLeastShare).
  // `blackout`: how long the gang keeps the GPUs from now (a pending or active phase).
  static std::optional<LeaseCalendar> of(const GangRuntime& gang, bool large_has_work, double share,
                                         Duration blackout, Time now);

  // The time the leases that start before `first_token` add to it (each pushes it later, which
  // may let the next one in as well).
  Duration delay_before(Time first_token) const;

  Time next_start() const { return next_start_; }
  Duration cycle() const { return cycle_; }
  Duration length() const { return length_; }

 private:
  LeaseCalendar(Time next_start, Duration cycle, Duration length)
      : next_start_(next_start), cycle_(cycle), length_(length) {}

  Time next_start_;
  Duration cycle_;
  Duration length_;
};

}  // namespace gangway
