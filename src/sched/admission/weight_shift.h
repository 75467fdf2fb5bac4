// The overload ladder's weight shift (docs/overload.md): moves the gang arbiter's effective
// LM/SM weight toward the tier whose SLO is at risk, within a bound, with hysteresis.
//
// The signal, per tier (large model, small models): of the recent outcomes of requests of the
// most important class, the share that missed: rejected as late or busy (deadline_unmeetable,
// shed, queue_full) or completed off their TTFT/TPOT target. "Recent" is an exponential decay
// with time constant `window` (O(1) state per tier). The risk gap is the large tier's miss share
// minus the small tier's. While the gap has stayed at or above `risk_gap` for `dwell`, the large
// weight's factor is multiplied by kStep (at most `max_factor`); at or below -`risk_gap`, divided
// (at least 1 / `max_factor`); while |gap| has stayed below `risk_gap` * kLeaveFraction for
// `dwell`, it steps back toward 1. In between it holds. It moves away from 1 only while the
// overload ladder is at `from_level` or above; otherwise it steps back toward 1. Pure state
// machine: told the time.
#pragma once

#include <cstdint>

#include "core/time.h"
#include "sched/admission/overload_ladder.h"

namespace gangway {

// What the weight shift did, for reports (runs[].admission.weight_shift).
struct WeightShiftReport {
  bool enabled = false;
  double max_factor = 1.0;
  double factor = 1.0;  // as of the last update
  double peak_factor = 1.0;
  double lowest_factor = 1.0;
  int64_t shifts_toward_large = 0;
  int64_t shifts_toward_small = 0;
  Duration time_toward_large{0};  // with the factor above 1
  Duration time_toward_small{0};  // below 1
  double large_risk = 0;          // the decayed miss shares, as of the last update
  double small_risk = 0;
};

struct WeightShiftSpec {
  bool enabled = false;
  // The large weight is scaled by a factor in [1 / max_factor, max_factor].
  double max_factor = 16.0;
  // Time constant of the decayed miss shares.
  Duration window = std::chrono::seconds(2);
  // Difference of the tiers' miss shares that moves the factor.
  double risk_gap = 0.1;
  Duration dwell = std::chrono::milliseconds(500);
  // The shift is a rung of the overload ladder: it moves the factor away from 1 only while the
  // ladder is at this rung or above (the node is overloaded); below it, the factor steps back
  // toward 1, one step per dwell.
  OverloadLevel from_level = OverloadLevel::kShedBatch;
};

class WeightShift {
 public:
  // Each move multiplies or divides the factor by this.
  static constexpr double kStep = 1.4142135623730951;  // sqrt(2)
  // The factor steps back toward 1 once |gap| < risk_gap * kLeaveFraction.
  static constexpr double kLeaveFraction = 0.5;
  // Fewer decayed outcomes than this on a tier: no evidence, its miss share counts as 0.
  static constexpr double kMinSamples = 5.0;

  explicit WeightShift(WeightShiftSpec spec = {}) : spec_(spec) {}

  // A request of the most important class ended: on time or not, on the large tier or not.
  void note_outcome(bool large, bool on_time, Time now);
  // Re-evaluates the factor; true when it changed. `engaged`: the ladder is at from_level or
  // above.
  bool update(Time now, bool engaged);

  double factor() const { return factor_; }
  const WeightShiftSpec& spec() const { return spec_; }
  // The decayed miss shares as of the last note or update.
  double large_risk() const { return risk(large_); }
  double small_risk() const { return risk(small_); }

  // Report: moves toward each tier, time with the factor above and below 1, the extremes.
  int64_t shifts_toward_large() const { return toward_large_; }
  int64_t shifts_toward_small() const { return toward_small_; }
  Duration time_toward_large() const { return time_large_; }
  Duration time_toward_small() const { return time_small_; }
  double peak_factor() const { return peak_; }
  double lowest_factor() const { return lowest_; }
  WeightShiftReport report() const {
    return {spec_.enabled, spec_.max_factor, factor_,     peak_,        lowest_,     toward_large_,
            toward_small_, time_large_,      time_small_, large_risk(), small_risk()};
  }

 private:
  struct Tier {
    double missed = 0;
    double total = 0;
  };
  static double risk(const Tier& tier) {
    return tier.total >= kMinSamples ? tier.missed / tier.total : 0.0;
  }
  void advance(Time now);  // decays the tiers and accounts time up to `now`

  WeightShiftSpec spec_;
  Tier large_;
  Tier small_;
  int level_ = 0;  // factor = kStep^level, within [1 / max_factor, max_factor]
  double factor_ = 1.0;
  double peak_ = 1.0;
  double lowest_ = 1.0;
  bool started_ = false;
  Time last_;
  // Since when the gap has been in the band that moves the factor that way, if it has.
  enum class Band : uint8_t { kHold, kUp, kDown, kBack };
  Band band_ = Band::kHold;
  Time band_since_;
  int64_t toward_large_ = 0;
  int64_t toward_small_ = 0;
  Duration time_large_{0};
  Duration time_small_{0};
};

}  // namespace gangway
