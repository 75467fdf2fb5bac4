#include "sched/admission/weight_shift.h"

#include <gtest/gtest.h>

#include "core/time_for_tests.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

WeightShiftSpec enabled_spec() {
  WeightShiftSpec spec;
  spec.enabled = true;
  spec.max_factor = 4.0;
  return spec;
}

// Every 10 ms one outcome per tier, each on time with the given probability (as a fixed pattern
// over ten outcomes), then an update.
void feed(WeightShift& shift, int64_t& t, int64_t until_ms, int large_misses_in_10,
          int small_misses_in_10) {
  for (int i = 0; t <= until_ms; t += 10, ++i) {
    shift.note_outcome(true, i % 10 >= large_misses_in_10, at_ms(t));
    shift.note_outcome(false, i % 10 >= small_misses_in_10, at_ms(t));
    shift.update(at_ms(t), true);
  }
}

TEST(WeightShift, OffItNeverMoves) {
  WeightShift shift;
  int64_t t = 0;
  feed(shift, t, 5000, 10, 0);
  EXPECT_EQ(shift.factor(), 1.0);
  EXPECT_EQ(shift.shifts_toward_large(), 0);
}

TEST(WeightShift, MovesTowardTheLargeModelWhileItMissesMoreUpToTheBound) {
  WeightShift shift(enabled_spec());
  int64_t t = 0;
  feed(shift, t, 10000, 8, 1);  // the LM misses 80 %, the SM 10 %
  EXPECT_DOUBLE_EQ(shift.factor(), 4.0);
  EXPECT_DOUBLE_EQ(shift.peak_factor(), 4.0);
  EXPECT_EQ(shift.shifts_toward_large(), 4);  // sqrt(2) per step: 1 -> 4 in four
  EXPECT_EQ(shift.shifts_toward_small(), 0);
  EXPECT_GT(shift.time_toward_large(), milliseconds(5000));
  EXPECT_NEAR(shift.large_risk(), 0.8, 0.05);
}

TEST(WeightShift, MovesTowardTheSmallModelsWhileTheyMissMore) {
  WeightShiftSpec spec = enabled_spec();
  spec.max_factor = 2.0;
  WeightShift shift(spec);
  int64_t t = 0;
  feed(shift, t, 10000, 0, 5);
  EXPECT_DOUBLE_EQ(shift.factor(), 0.5);
  EXPECT_DOUBLE_EQ(shift.lowest_factor(), 0.5);
  EXPECT_EQ(shift.shifts_toward_small(), 2);
}

TEST(WeightShift, HoldsInsideTheBandAndStepsBackWhenTheGapCloses) {
  WeightShiftSpec spec = enabled_spec();
  spec.risk_gap = 0.15;  // leave band: below 0.075
  WeightShift shift(spec);
  int64_t t = 0;
  feed(shift, t, 1200, 8, 0);  // two moves up (one per 500 ms dwell)
  ASSERT_DOUBLE_EQ(shift.factor(), 2.0);
  // A gap of 0.1: below risk_gap, above its leave band: once the decayed shares have settled
  // there, the factor holds.
  feed(shift, t, 8000, 1, 0);
  const double settled = shift.factor();
  EXPECT_GE(settled, 2.0);
  feed(shift, t, 16000, 1, 0);
  EXPECT_DOUBLE_EQ(shift.factor(), settled);
  // Equal shares: back to the configured weights, one step per dwell, never below.
  feed(shift, t, 30000, 2, 2);
  EXPECT_DOUBLE_EQ(shift.factor(), 1.0);
  EXPECT_GT(shift.shifts_toward_small(), 0);
  EXPECT_EQ(shift.lowest_factor(), 1.0);
}

TEST(WeightShift, OnlyUnderOverloadAndBackToOneWhenItEnds) {
  WeightShift shift(enabled_spec());
  int64_t t = 0;
  for (; t <= 5000; t += 10) {
    shift.note_outcome(true, false, at_ms(t));
    shift.note_outcome(false, true, at_ms(t));
    shift.update(at_ms(t), /*engaged=*/false);
  }
  EXPECT_EQ(shift.factor(), 1.0);
  for (; t <= 10000; t += 10) {
    shift.note_outcome(true, false, at_ms(t));
    shift.note_outcome(false, true, at_ms(t));
    shift.update(at_ms(t), /*engaged=*/t < 7000);
  }
  EXPECT_GT(shift.peak_factor(), 2.0);  // three moves in the 2 s engaged
  EXPECT_EQ(shift.factor(), 1.0);
}

TEST(WeightShift, ShortSpikesDoNotMoveIt) {
  WeightShiftSpec spec = enabled_spec();
  spec.window = milliseconds(100);
  WeightShift shift(spec);
  int64_t t = 0;
  for (int i = 0; t < 10000; t += 10, ++i) {
    // The LM misses for 200 ms of every 1 s: shorter than the 500 ms dwell.
    const bool spike = t % 1000 < 200;
    shift.note_outcome(true, !spike, at_ms(t));
    shift.note_outcome(false, true, at_ms(t));
    shift.update(at_ms(t), true);
  }
  EXPECT_EQ(shift.factor(), 1.0);
}

TEST(WeightShift, NoEvidenceNoMove) {
  WeightShift shift(enabled_spec());
  // Two LM misses, nothing else: fewer than kMinSamples decayed outcomes.
  shift.note_outcome(true, false, at_ms(0));
  shift.note_outcome(true, false, at_ms(1));
  for (int64_t t = 0; t <= 3000; t += 10) shift.update(at_ms(t), true);
  EXPECT_EQ(shift.factor(), 1.0);
}

}  // namespace
}  // namespace gangway
