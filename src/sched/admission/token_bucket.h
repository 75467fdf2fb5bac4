// A token bucket: a rate limit with a burst allowance, for per-tenant and per-class request and
// token rates. Told the time, never reading a clock; refills lazily when asked. It also says how
// long until a request of a given size would pass, which becomes the Retry-After of a rejection.
#pragma once

#include <algorithm>

#include "core/time.h"

namespace gangway {

class TokenBucket {
 public:
  TokenBucket() = default;
  // REQUIRES: rate_per_s > 0, burst > 0. The bucket starts full.
  TokenBucket(double rate_per_s, double burst)
      : rate_per_s_(rate_per_s), burst_(burst), level_(burst) {}

  // Takes `amount` if the bucket holds it after refilling to `now`; else takes nothing.
  bool try_take(double amount, Time now) {
    refill(now);
    if (level_ + 1e-9 < amount) return false;
    level_ -= amount;
    return true;
  }
  // How long from `now` until `amount` would be available (zero if it is now). An amount above
  // the burst can never pass; the wait returned for it is the time to refill the whole burst.
  Duration wait_for(double amount, Time now) {
    refill(now);
    const double missing = std::min(amount, burst_) - level_;
    return missing <= 0 ? Duration(0) : seconds_to_duration(missing / rate_per_s_);
  }
  double level(Time now) {
    refill(now);
    return level_;
  }
  double rate_per_s() const { return rate_per_s_; }
  double burst() const { return burst_; }

 private:
  void refill(Time now) {
    if (now > last_) {
      level_ = std::min(burst_, level_ + rate_per_s_ * to_seconds(now - last_));
      last_ = now;
    }
  }

  double rate_per_s_ = 0;
  double burst_ = 0;
  double level_ = 0;
  Time last_;
};

}  // namespace gangway
