#include "core/time.h"

#include <gtest/gtest.h>

#include <limits>

namespace gangway {
namespace {

constexpr int64_t kLargest = std::numeric_limits<int64_t>::max();
constexpr int64_t kSmallest = std::numeric_limits<int64_t>::min();

TEST(Time, AddsAndSubtractsDurations) {
  const Time t = Time::from_ns(1'000);
  EXPECT_EQ((t + Duration(250)).ns(), 1'250);
  EXPECT_EQ((t - Duration(250)).ns(), 750);
  EXPECT_EQ((t + Duration(-250)).ns(), 750);
  EXPECT_EQ((t - Duration(-250)).ns(), 1'250);
  EXPECT_EQ(Time::from_ns(700) - t, Duration(-300));
}

// Time::max() means "never": deadlines computed from it must stay never, not wrap into the past.
TEST(Time, NeverStaysNeverWhateverIsAdded) {
  EXPECT_EQ(Time::max() + Duration(1), Time::max());
  EXPECT_EQ(Time::max() - Duration(-1), Time::max());
  EXPECT_EQ(Time::from_ns(kLargest - 5) + Duration(6), Time::max());
  EXPECT_EQ((Time::from_ns(kLargest - 5) + Duration(5)).ns(), kLargest);
}

TEST(Time, SaturatesAtTheFarPast) {
  EXPECT_EQ((Time::from_ns(kSmallest + 5) - Duration(6)).ns(), kSmallest);
  EXPECT_EQ((Time::from_ns(kSmallest + 5) + Duration(-6)).ns(), kSmallest);
  EXPECT_EQ((Time::from_ns(kSmallest + 5) - Duration(5)).ns(), kSmallest);
  // Subtracting the most negative duration is adding more than any time holds.
  EXPECT_EQ(Time::zero() - Duration(kSmallest), Time::max());
  EXPECT_EQ((Time::from_ns(-1) - Duration(kSmallest)).ns(), kLargest);
}

TEST(Time, ArithmeticIsUsableInConstantExpressions) {
  static_assert((Time::from_ns(2) + Duration(3)).ns() == 5);
  static_assert(Time::max() + Duration(1) == Time::max());
  static_assert((Time::from_ns(kSmallest) - Duration(1)).ns() == kSmallest);
}

}  // namespace
}  // namespace gangway
