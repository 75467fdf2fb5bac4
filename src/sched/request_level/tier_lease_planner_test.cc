// TierLeasePlanner: holds while both tiers have work, hand-over when a tier is idle or gone,
// aging of large requests, and holds that grow with the measured switch latency.
#include "sched/request_level/tier_lease_planner.h"

#include <gtest/gtest.h>

#include "core/time_for_tests.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

TierLeaseOptions options() {
  TierLeaseOptions o;
  o.large_hold = milliseconds(100);
  o.small_hold = milliseconds(300);
  o.max_large_wait = milliseconds(200);
  o.holds_per_switch = 10;
  return o;
}

TierBacklog busy(std::optional<Time> oldest = std::nullopt) {
  TierBacklog d;
  d.queued = 1;
  d.oldest_queued_arrival = oldest.value_or(at_ms(0));
  d.oldest_waiting_arrival = d.oldest_queued_arrival;
  return d;
}

TEST(TierLeasePlannerTest, NoHandOverWhileTheOtherTierHasNoWork) {
  const TierLeasePlanner planner(options());
  const TierDecision d =
      planner.decide(EngineTier::kSmall, at_ms(0), busy(), TierBacklog(), at_ms(5000));
  EXPECT_FALSE(d.hand_over);
  EXPECT_EQ(d.ask_again, Time::max());
}

TEST(TierLeasePlannerTest, AnIdleHolderHandsOverAtOnce) {
  const TierLeasePlanner planner(options());
  EXPECT_TRUE(
      planner.decide(EngineTier::kSmall, at_ms(0), TierBacklog(), busy(), at_ms(1)).hand_over);
  EXPECT_TRUE(
      planner.decide(EngineTier::kLarge, at_ms(0), busy(), TierBacklog(), at_ms(1)).hand_over);
}

TEST(TierLeasePlannerTest, BusyTiersHoldForTheirShare) {
  const TierLeasePlanner planner(options());
  TierDecision d = planner.decide(EngineTier::kLarge, at_ms(0), busy(), busy(), at_ms(50));
  EXPECT_FALSE(d.hand_over);
  EXPECT_EQ(d.ask_again, at_ms(100));
  EXPECT_TRUE(planner.decide(EngineTier::kLarge, at_ms(0), busy(), busy(), at_ms(100)).hand_over);
  // The small tier's hold is longer, but a large request ages into its turn first.
  d = planner.decide(EngineTier::kSmall, at_ms(0), busy(), busy(at_ms(50)), at_ms(60));
  EXPECT_FALSE(d.hand_over);
  EXPECT_EQ(d.ask_again, at_ms(250));
  EXPECT_TRUE(
      planner.decide(EngineTier::kSmall, at_ms(0), busy(), busy(at_ms(50)), at_ms(250)).hand_over);
}

TEST(TierLeasePlannerTest, HoldsGrowWithTheMeasuredSwitchLatency) {
  TierLeasePlanner planner(options());
  EXPECT_EQ(planner.hold(EngineTier::kLarge), milliseconds(100));
  planner.observe_switch(milliseconds(40));
  EXPECT_EQ(planner.switch_latency(), milliseconds(40));
  EXPECT_EQ(planner.hold(EngineTier::kLarge), milliseconds(400));
  EXPECT_EQ(planner.hold(EngineTier::kSmall), milliseconds(400));
  planner.observe_switch(milliseconds(0));
  EXPECT_EQ(planner.switch_latency(), milliseconds(30));
}

TEST(TierLeasePlannerTest, AHolderWithoutEnginesGivesTheGpusBack) {
  const TierLeasePlanner planner(options());
  TierBacklog gone = busy();
  gone.available = false;
  EXPECT_TRUE(
      planner.decide(EngineTier::kLarge, at_ms(0), TierBacklog(), gone, at_ms(1)).hand_over);
  EXPECT_FALSE(
      planner.decide(EngineTier::kSmall, at_ms(0), TierBacklog(), gone, at_ms(1)).hand_over);
}

}  // namespace
}  // namespace gangway
