#include "metrics/node_time_account.h"

#include <gtest/gtest.h>

#include <array>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "core/time_for_tests.h"
#include "metrics/allocation_count_for_tests.h"

namespace gangway {
namespace {

using A = GpuActivity;

std::array<GpuActivity, 8> all(GpuActivity activity) {
  std::array<GpuActivity, 8> state;
  state.fill(activity);
  return state;
}

// A hand-made 50 ms timeline on 8 GPUs, starting at 100 ms:
//   [0, 10)  ms: every GPU runs SM iterations                       -> 80 GPU-ms small
//   [10, 12) ms: GPUs 0-6 wait at the gang barrier, GPU 7 finishes   -> 14 barrier, 2 small
//   [12, 42) ms: the LM gang runs                                    -> 240 large
//   [42, 50) ms: GPUs 0-3 SM, 4-5 idle while work waits, 6 idle, 7 failed
//                                                   -> 32 small, 16 idle-waiting, 8 idle, 8 failed
// Total 400 GPU-ms: small 114, large 240, barrier 14, idle-waiting 16, idle 8, failed 8.
NodeTimeAccount hand_made_timeline() {
  NodeTimeAccount account(8, at_ms(100));
  account.observe(at_ms(100), all(A::kRunningSmall));
  auto barrier = all(A::kGangBarrier);
  barrier[7] = A::kRunningSmall;
  account.observe(at_ms(110), barrier);
  account.observe(at_ms(112), all(A::kRunningLarge));
  const std::array<GpuActivity, 8> after_lease = {
      A::kRunningSmall,     A::kRunningSmall,     A::kRunningSmall, A::kRunningSmall,
      A::kIdleWhileWaiting, A::kIdleWhileWaiting, A::kIdle,         A::kFailed};
  account.observe(at_ms(142), after_lease);
  account.advance(at_ms(150));
  return account;
}

TEST(NodeTimeAccount, HandMadeTimelineHasKnownSeconds) {
  const NodeTimeAccount account = hand_made_timeline();
  EXPECT_EQ(account.elapsed(), ms_to_duration(50));
  EXPECT_EQ(account.total_duration(A::kRunningSmall), ms_to_duration(114));
  EXPECT_EQ(account.total_duration(A::kRunningLarge), ms_to_duration(240));
  EXPECT_EQ(account.total_duration(A::kGangBarrier), ms_to_duration(14));
  EXPECT_EQ(account.total_duration(A::kIdleWhileWaiting), ms_to_duration(16));
  EXPECT_EQ(account.total_duration(A::kIdle), ms_to_duration(8));
  EXPECT_EQ(account.total_duration(A::kFailed), ms_to_duration(8));
  EXPECT_DOUBLE_EQ(account.seconds(GpuId(7), A::kRunningSmall), 0.012);
  EXPECT_DOUBLE_EQ(account.seconds(GpuId(0), A::kGangBarrier), 0.002);
  EXPECT_DOUBLE_EQ(account.seconds(GpuId(0), A::kRunningLarge), 0.030);
  EXPECT_DOUBLE_EQ(account.total_seconds(A::kRunningLarge), 0.240);
  EXPECT_EQ(account.current(GpuId(7)), A::kFailed);
}

TEST(NodeTimeAccount, HandMadeTimelineHasKnownFractions) {
  const nlohmann::json json = nlohmann::json::parse(hand_made_timeline().to_json().dump());
  EXPECT_EQ(json["gpu_count"], 8);
  EXPECT_DOUBLE_EQ(json["elapsed_s"].get<double>(), 0.050);
  EXPECT_DOUBLE_EQ(json["gpu_seconds"].get<double>(), 0.400);
  EXPECT_DOUBLE_EQ(json["gpu_utilization"].get<double>(), (114.0 + 240.0) / (400.0 - 8.0));
  EXPECT_DOUBLE_EQ(json["sm_busy_fraction"].get<double>(), 114.0 / 400);
  EXPECT_DOUBLE_EQ(json["lm_busy_fraction"].get<double>(), 240.0 / 400);
  EXPECT_DOUBLE_EQ(json["gang_barrier_fraction"].get<double>(), 14.0 / 400);
  EXPECT_DOUBLE_EQ(json["idle_while_waiting_fraction"].get<double>(), 16.0 / 400);
  EXPECT_DOUBLE_EQ(json["idle_fraction"].get<double>(), 8.0 / 400);
  EXPECT_DOUBLE_EQ(json["failed_fraction"].get<double>(), 8.0 / 400);
  EXPECT_DOUBLE_EQ(json["lost_fraction"].get<double>(), 30.0 / 400);
  EXPECT_DOUBLE_EQ(json["seconds"]["running_large"].get<double>(), 0.240);

  ASSERT_EQ(json["per_gpu"].size(), 8u);
  const nlohmann::json& gpu7 = json["per_gpu"][7];
  EXPECT_EQ(gpu7["gpu"], 7);
  EXPECT_DOUBLE_EQ(gpu7["sm_busy_fraction"].get<double>(), 12.0 / 50);
  EXPECT_DOUBLE_EQ(gpu7["failed_fraction"].get<double>(), 8.0 / 50);
  EXPECT_DOUBLE_EQ(gpu7["gpu_utilization"].get<double>(), 42.0 / 42);
  const nlohmann::json& gpu4 = json["per_gpu"][4];
  EXPECT_DOUBLE_EQ(gpu4["idle_while_waiting_fraction"].get<double>(), 8.0 / 50);
  EXPECT_DOUBLE_EQ(gpu4["gang_barrier_fraction"].get<double>(), 2.0 / 50);
  EXPECT_DOUBLE_EQ(gpu4["gpu_utilization"].get<double>(), 40.0 / 50);

  // Every GPU's fractions add up to one: no time is lost or counted twice.
  for (const nlohmann::json& gpu : json["per_gpu"]) {
    double sum = 0;
    for (const char* key : {"sm_busy_fraction", "lm_busy_fraction", "gang_barrier_fraction",
                            "idle_while_waiting_fraction", "idle_fraction", "failed_fraction"}) {
      sum += gpu[key].get<double>();
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
  }
}

TEST(NodeTimeAccount, IntervalGoesToTheStateGivenAtThePreviousCall) {
  NodeTimeAccount account(1, at_ms(0));
  const std::array<GpuActivity, 1> running = {A::kRunningSmall};
  const std::array<GpuActivity, 1> idle = {A::kIdle};
  account.observe(at_ms(0), running);
  account.observe(at_ms(7), idle);  // [0, 7) was running
  EXPECT_EQ(account.duration(GpuId(0), A::kRunningSmall), ms_to_duration(7));
  EXPECT_EQ(account.duration(GpuId(0), A::kIdle), Duration(0));
  account.observe(at_ms(10), running);  // [7, 10) was idle
  EXPECT_EQ(account.duration(GpuId(0), A::kIdle), ms_to_duration(3));
}

TEST(NodeTimeAccount, GpusStartIdleAndSameTimeEventsAddNothing) {
  NodeTimeAccount account(2, at_ms(5));
  const std::array<GpuActivity, 2> busy = {A::kRunningLarge, A::kRunningLarge};
  account.observe(at_ms(8), busy);  // [5, 8) idle on both
  account.observe(at_ms(8), busy);
  account.observe(at_ms(8), busy);
  EXPECT_EQ(account.total_duration(A::kIdle), ms_to_duration(6));
  EXPECT_EQ(account.total_duration(A::kRunningLarge), Duration(0));
}

TEST(NodeTimeAccount, RejectsWrongGpuCountAndTimeGoingBack) {
  NodeTimeAccount account(8, at_ms(10));
  const std::vector<GpuActivity> seven(7, A::kIdle);
  EXPECT_THROW(account.observe(at_ms(11), seven), std::invalid_argument);
  EXPECT_THROW(account.observe(at_ms(9), all(A::kIdle)), std::logic_error);
  EXPECT_THROW(account.advance(at_ms(9)), std::logic_error);
  EXPECT_THROW(static_cast<void>(account.seconds(GpuId(8), A::kIdle)), std::out_of_range);
  EXPECT_THROW(NodeTimeAccount(0, at_ms(0)), std::invalid_argument);
}

TEST(NodeTimeAccount, NoElapsedTimeGivesNullFractions) {
  const NodeTimeAccount account(8, at_ms(0));
  const nlohmann::json json = account.to_json();
  EXPECT_TRUE(json["gpu_utilization"].is_null());
  EXPECT_TRUE(json["gang_barrier_fraction"].is_null());
  EXPECT_EQ(json["per_gpu"].size(), 8u);
}

TEST(NodeTimeAccount, ObserveNeverAllocates) {
  NodeTimeAccount account(8, at_ms(0));
  const auto small = all(A::kRunningSmall);
  const auto large = all(A::kRunningLarge);
  const uint64_t allocations_before = testing::allocations_so_far();
  for (int i = 1; i <= 100'000; ++i) account.observe(at_ms(i), i % 2 == 0 ? small : large);
  EXPECT_EQ(testing::allocations_so_far(), allocations_before);
  EXPECT_EQ(account.total_duration(A::kRunningLarge), ms_to_duration(50'000 * 8));
}

}  // namespace
}  // namespace gangway
