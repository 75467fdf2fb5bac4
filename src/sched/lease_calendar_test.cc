// The lease calendar admission's promise mode counts in a small-model newcomer's wait: when the
// next lease starts, how many land before a first token, and when there is none to expect.

#include "sched/lease_calendar.h"

#include <gtest/gtest.h>

namespace gangway {
namespace {

using std::chrono::milliseconds;

Time at_ms(int64_t ms) {
  return Time::zero() + milliseconds(ms);
}

// A gang whose leases last 100 ms and take a quarter of the node: one every 400 ms.
GangRuntime contended_gang(GangPhase phase, int64_t released_ms) {
  GangRuntime gang;
  gang.phase = phase;
  gang.typical_phase = milliseconds(100);
  gang.last_released = at_ms(released_ms);
  gang.contended_share = 0.25;
  return gang;
}

TEST(LeaseCalendar, TheNextLeaseComesACycleAfterTheLastOneStarted) {
  const GangRuntime gang = contended_gang(GangPhase::kOff, 1000);
  const auto calendar = LeaseCalendar::of(gang, true, 0.25, Duration(0), at_ms(1100));
  ASSERT_TRUE(calendar.has_value());
  EXPECT_EQ(calendar->cycle(), milliseconds(400));
  EXPECT_EQ(calendar->next_start(), at_ms(1300));  // released at 1.0 s, 300 ms between leases
  // A first token before it: nothing added.
  EXPECT_EQ(calendar->delay_before(at_ms(1250)), Duration(0));
  // After it: that lease (the token moves to 1.45 s, before the following one at 1.7 s).
  EXPECT_EQ(calendar->delay_before(at_ms(1350)), milliseconds(100));
  // Spanning the following one too, once the first has pushed it past 1.7 s.
  EXPECT_EQ(calendar->delay_before(at_ms(1650)), milliseconds(200));
}

TEST(LeaseCalendar, APhaseInProgressIsFollowedByTheNextAfterTheGap) {
  const GangRuntime gang = contended_gang(GangPhase::kActive, 1000);
  const auto calendar = LeaseCalendar::of(gang, true, 0.25, milliseconds(50), at_ms(2000));
  ASSERT_TRUE(calendar.has_value());
  // The blackout (the rest of this phase) is the routing prediction's; the next lease starts
  // 300 ms after it ends.
  EXPECT_EQ(calendar->next_start(), at_ms(2350));
}

TEST(LeaseCalendar, AnOverdueLeaseMayStartAtOnce) {
  const GangRuntime gang = contended_gang(GangPhase::kOff, 500);
  const auto calendar = LeaseCalendar::of(gang, true, 0.25, Duration(0), at_ms(2000));
  ASSERT_TRUE(calendar.has_value());
  EXPECT_EQ(calendar->next_start(), at_ms(2000));
  EXPECT_EQ(calendar->delay_before(at_ms(2010)), milliseconds(100));
}

TEST(LeaseCalendar, NoneWithoutLargeWorkOrContendedHistory) {
  const GangRuntime gang = contended_gang(GangPhase::kOff, 1000);
  EXPECT_FALSE(LeaseCalendar::of(gang, false, 0.25, Duration(0), at_ms(1100)).has_value());
  EXPECT_FALSE(LeaseCalendar::of(gang, true, 0.001, Duration(0), at_ms(1100)).has_value());
  GangRuntime never_released = gang;
  never_released.last_released = Time::zero();
  EXPECT_FALSE(LeaseCalendar::of(never_released, true, 0.25, Duration(0), at_ms(1100)));
  GangRuntime no_length = gang;
  no_length.typical_phase = Duration(0);
  EXPECT_FALSE(LeaseCalendar::of(no_length, true, 0.25, Duration(0), at_ms(1100)));
}

TEST(LeaseCalendar, CountsAtMostABoundedNumberOfLeases) {
  // Nearly all the node's time to the gang: every lease pushes the token into the next one.
  const GangRuntime gang = contended_gang(GangPhase::kOff, 1000);
  const auto calendar = LeaseCalendar::of(gang, true, 0.99, Duration(0), at_ms(1000));
  ASSERT_TRUE(calendar.has_value());
  EXPECT_EQ(calendar->delay_before(at_ms(1000) + std::chrono::hours(1)),
            LeaseCalendar::kMostLeases * milliseconds(100));
}

}  // namespace
}  // namespace gangway
