#include "sched/admission/overload_ladder.h"

#include <algorithm>

namespace gangway {

const char* to_string(OverloadLevel level) {
  switch (level) {
    case OverloadLevel::kNormal:
      return "normal";
    case OverloadLevel::kDeferBatch:
      return "defer_batch";
    case OverloadLevel::kCapBatchTokens:
      return "cap_batch_tokens";
    case OverloadLevel::kShedBatch:
      return "shed_batch";
    case OverloadLevel::kShedStandard:
      return "shed_standard";
    case OverloadLevel::kShedInteractive:
      return "shed_interactive";
  }
  return "?";
}

bool OverloadLadder::update(double pressure, Time now) {
  if (started_ && now > last_update_) {
    time_in_[static_cast<int>(level_)] += now - last_update_;
  }
  started_ = true;
  last_update_ = now;

  const int current = static_cast<int>(level_);
  const bool above_next = current + 1 < kOverloadLevels && pressure >= spec_.enter[current + 1];
  const bool below_this = current > 0 && pressure < spec_.enter[current] * spec_.leave_fraction;

  if (above_next) {
    if (!rising_) {
      rising_ = true;
      rising_since_ = now;
    }
  } else {
    rising_ = false;
  }
  if (below_this) {
    if (!falling_) {
      falling_ = true;
      falling_since_ = now;
    }
  } else {
    falling_ = false;
  }

  if (rising_ && now - rising_since_ >= spec_.dwell) {
    level_ = static_cast<OverloadLevel>(current + 1);
    ++entered_[current + 1];
    rising_ = false;
    return true;
  }
  if (falling_ && now - falling_since_ >= spec_.dwell) {
    level_ = static_cast<OverloadLevel>(current - 1);
    ++entered_[current - 1];
    falling_ = false;
    return true;
  }
  return false;
}

Time OverloadLadder::next_step_down(Time now) const {
  if (level_ == OverloadLevel::kNormal) return Time::max();
  return falling_ ? std::max(now, falling_since_ + spec_.dwell) : now;
}

}  // namespace gangway
