// The overload ladder: graduated measures the node takes as load rises, entered and left with
// hysteresis so that it does not flap. Each rung includes the ones below it:
//
//   0 normal              nothing
//   1 defer batch         batch-class requests are not admitted to a batch while others wait
//   2 cap batch tokens    batch requests' max_tokens is capped (shorter answers, less work)
//   3 shed batch          new batch requests are rejected; queued ones are dropped
//   4 shed standard       ... and standard requests
//   5 shed interactive    ... and interactive requests that cannot meet their deadline
//
// The signal is a pressure: the node's predicted wait relative to the tightest TTFT target it
// serves (1.0: a new interactive request would only just meet its target). A rung is entered when
// the pressure has stayed at or above its enter threshold and left when it has stayed below its
// (lower) leave threshold, each for at least `dwell`. Pure state machine: told the time.
#pragma once

#include <array>
#include <cstdint>

#include "core/time.h"

namespace gangway {

enum class OverloadLevel : uint8_t {
  kNormal = 0,
  kDeferBatch = 1,
  kCapBatchTokens = 2,
  kShedBatch = 3,
  kShedStandard = 4,
  kShedInteractive = 5,
};
inline constexpr int kOverloadLevels = 6;

const char* to_string(OverloadLevel level);

struct OverloadLadderSpec {
  // Pressure at which rung k (1..5) is entered; it is left below enter[k] * leave_fraction.
  std::array<double, kOverloadLevels> enter = {0.0, 0.5, 0.7, 0.9, 1.2, 1.6};
  double leave_fraction = 0.7;
  Duration dwell = std::chrono::milliseconds(200);
};

class OverloadLadder {
 public:
  explicit OverloadLadder(OverloadLadderSpec spec = {}) : spec_(spec) {}

  // Feeds the current pressure; returns true when the level changed.
  bool update(double pressure, Time now);
  OverloadLevel level() const { return level_; }
  bool at_least(OverloadLevel level) const { return level_ >= level; }
  // How many times each level was entered, and the time spent in it (up to the last update).
  int64_t entered(OverloadLevel level) const { return entered_[static_cast<int>(level)]; }
  Duration time_in(OverloadLevel level) const { return time_in_[static_cast<int>(level)]; }
  const OverloadLadderSpec& spec() const { return spec_; }
  // When the ladder, fed a pressure below every leave threshold from now on, would next step
  // down; Time::max() at normal. (Now, if it is not falling yet: the next update starts it.)
  Time next_step_down(Time now) const;

 private:
  OverloadLadderSpec spec_;
  OverloadLevel level_ = OverloadLevel::kNormal;
  Time last_update_;
  bool started_ = false;
  // Since when the pressure has been past the next rung's enter threshold (or below this rung's
  // leave threshold), if it has.
  bool rising_ = false;
  Time rising_since_;
  bool falling_ = false;
  Time falling_since_;
  std::array<int64_t, kOverloadLevels> entered_{};
  std::array<Duration, kOverloadLevels> time_in_{};
};

}  // namespace gangway
