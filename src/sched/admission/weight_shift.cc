#include "sched/admission/weight_shift.h"

#include <algorithm>
#include <cmath>

namespace gangway {

void WeightShift::advance(Time now) {
  if (!started_) {
    started_ = true;
    last_ = now;
    band_since_ = now;
    return;
  }
  if (now <= last_) return;
  const Duration elapsed = now - last_;
  if (factor_ > 1.0) time_large_ += elapsed;
  if (factor_ < 1.0) time_small_ += elapsed;
  const double decay = std::exp(-to_seconds(elapsed) / to_seconds(spec_.window));
  for (Tier* tier : {&large_, &small_}) {
    tier->missed *= decay;
    tier->total *= decay;
  }
  last_ = now;
}

void WeightShift::note_outcome(bool large, bool on_time, Time now) {
  if (!spec_.enabled) return;
  advance(now);
  Tier& tier = large ? large_ : small_;
  tier.total += 1;
  if (!on_time) tier.missed += 1;
}

bool WeightShift::update(Time now, bool engaged) {
  if (!spec_.enabled) return false;
  advance(now);
  const double gap = large_risk() - small_risk();
  Band band = Band::kHold;
  if (!engaged) {
    if (level_ != 0) band = Band::kBack;
  } else if (gap >= spec_.risk_gap) {
    band = Band::kUp;
  } else if (gap <= -spec_.risk_gap) {
    band = Band::kDown;
  } else if (std::abs(gap) < spec_.risk_gap * kLeaveFraction && level_ != 0) {
    band = Band::kBack;
  }
  if (band != band_) {
    band_ = band;
    band_since_ = now;
  }
  if (band == Band::kHold || now - band_since_ < spec_.dwell) return false;
  // Levels of kStep; the outermost level's factor is the bound itself.
  const int top = static_cast<int>(std::ceil(std::log(spec_.max_factor) / std::log(kStep) - 1e-9));
  const int before = level_;
  switch (band) {
    case Band::kUp:
      level_ = std::min(top, level_ + 1);
      break;
    case Band::kDown:
      level_ = std::max(-top, level_ - 1);
      break;
    case Band::kBack:
      level_ += level_ > 0 ? -1 : (level_ < 0 ? 1 : 0);
      break;
    case Band::kHold:
      break;
  }
  band_since_ = now;  // the next move needs another dwell
  if (level_ == before) return false;
  factor_ = level_ == 0
                ? 1.0
                : std::clamp(std::pow(kStep, level_), 1.0 / spec_.max_factor, spec_.max_factor);
  if (level_ > before) {
    ++toward_large_;
  } else {
    ++toward_small_;
  }
  peak_ = std::max(peak_, factor_);
  lowest_ = std::min(lowest_, factor_);
  return true;
}

}  // namespace gangway
