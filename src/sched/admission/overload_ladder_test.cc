#include "sched/admission/overload_ladder.h"

#include <gtest/gtest.h>

#include "core/time_for_tests.h"
#include "sched/admission/token_bucket.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

TEST(OverloadLadder, ClimbsOneRungPerDwellWhilePressureStaysHigh) {
  OverloadLadder ladder;
  EXPECT_EQ(ladder.level(), OverloadLevel::kNormal);
  int64_t t = 0;
  for (; t <= 2000; t += 10) ladder.update(2.0, at_ms(t));
  EXPECT_EQ(ladder.level(), OverloadLevel::kShedInteractive);
  EXPECT_EQ(ladder.entered(OverloadLevel::kShedBatch), 1);
}

TEST(OverloadLadder, ShortSpikesDoNotMoveIt) {
  OverloadLadder ladder;
  for (int64_t t = 0; t < 5000; t += 10) {
    // 100 ms above every 300 ms: shorter than the 200 ms dwell.
    ladder.update(t % 300 < 100 ? 5.0 : 0.1, at_ms(t));
  }
  EXPECT_EQ(ladder.level(), OverloadLevel::kNormal);
}

TEST(OverloadLadder, HysteresisKeepsTheRungBetweenLeaveAndEnter) {
  OverloadLadder ladder;
  int64_t t = 0;
  for (; t <= 300; t += 10) ladder.update(0.6, at_ms(t));  // enters defer-batch (0.5)
  ASSERT_EQ(ladder.level(), OverloadLevel::kDeferBatch);
  // Below enter (0.5) but above leave (0.35): stays.
  for (; t <= 2000; t += 10) ladder.update(0.4, at_ms(t));
  EXPECT_EQ(ladder.level(), OverloadLevel::kDeferBatch);
  for (; t <= 2400; t += 10) ladder.update(0.2, at_ms(t));
  EXPECT_EQ(ladder.level(), OverloadLevel::kNormal);
  EXPECT_GT(ladder.time_in(OverloadLevel::kDeferBatch), milliseconds(1500));
}

TEST(OverloadLadder, NextStepDownIsOneDwellAfterThePressureFell) {
  OverloadLadder ladder;
  EXPECT_EQ(ladder.next_step_down(at_ms(0)), Time::max());  // at normal
  int64_t t = 0;
  for (; t <= 500; t += 10) ladder.update(0.8, at_ms(t));  // defer_batch, then cap_batch_tokens
  ASSERT_EQ(ladder.level(), OverloadLevel::kCapBatchTokens);
  // Not falling yet: the next update would start the dwell.
  EXPECT_EQ(ladder.next_step_down(at_ms(t)), at_ms(t));
  ladder.update(0, at_ms(600));
  EXPECT_EQ(ladder.next_step_down(at_ms(650)), at_ms(800));
  EXPECT_FALSE(ladder.update(0, at_ms(799)));
  EXPECT_TRUE(ladder.update(0, at_ms(800)));
  EXPECT_EQ(ladder.level(), OverloadLevel::kDeferBatch);
}

TEST(TokenBucket, AllowsTheBurstThenTheRate) {
  TokenBucket bucket(10.0, 5.0);  // 10/s, burst of 5
  int passed = 0;
  for (int i = 0; i < 20; ++i) passed += bucket.try_take(1, at_ms(0));
  EXPECT_EQ(passed, 5);
  EXPECT_EQ(bucket.wait_for(1, at_ms(0)), milliseconds(100));
  EXPECT_FALSE(bucket.try_take(1, at_ms(50)));
  EXPECT_TRUE(bucket.try_take(1, at_ms(100)));
  // Over one second at 10/s, ten more pass whatever the number of attempts.
  passed = 0;
  for (int64_t t = 100; t <= 1100; t += 1) passed += bucket.try_take(1, at_ms(t));
  EXPECT_EQ(passed, 10);
  // More than the burst can never pass.
  EXPECT_FALSE(bucket.try_take(6, at_ms(100000)));
}

}  // namespace
}  // namespace gangway
