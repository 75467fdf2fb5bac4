// The agent check's answer (sim/cluster_agent_reply.h): HAProxy's grammar, the weight from the
// load report, drain, and no capacity.

#include "sim/cluster_agent_reply.h"

#include <gtest/gtest.h>

#include "sched/admission/overload_ladder.h"

namespace gangway {
namespace {

ModelLoad model(const std::string& tier, double wait_ms, int64_t live, double headroom_rps = 10) {
  ModelLoad load;
  load.model = tier == "small" ? "llama-3-8b" : "llama-3-70b";
  load.tier = tier;
  load.predicted_wait_ms = wait_ms;
  load.promised_wait_ms = wait_ms;
  load.running = live;
  load.headroom_rps = headroom_rps;
  return load;
}

LoadReport report(std::vector<ModelLoad> models) {
  LoadReport r;
  r.at = Time::zero() + std::chrono::seconds(10);
  r.models = std::move(models);
  r.gang_phase = "off";
  r.overload_level = "normal";
  r.ttft_target_ms = 200;
  return r;
}

TEST(AgentReply, AnIdleNodeTakesItsFullWeight) {
  const AgentReply reply = agent_reply(report({model("small", 0, 0)}), false, {});
  EXPECT_EQ(reply.state, AgentReply::State::kReady);
  EXPECT_EQ(reply.weight_percent, 100);
  EXPECT_EQ(agent_line(reply), "ready 100%\n");
}

TEST(AgentReply, TheWeightFallsWithThePressure) {
  // Pressure p = predicted wait / the tightest target (200 ms); weight 1 / (1 + p^2).
  EXPECT_EQ(agent_reply(report({model("small", 20, 5)}), false, {}).weight_percent, 99);
  EXPECT_EQ(agent_reply(report({model("small", 100, 5)}), false, {}).weight_percent, 80);
  EXPECT_EQ(agent_reply(report({model("small", 200, 5)}), false, {}).weight_percent, 50);
  EXPECT_EQ(agent_reply(report({model("small", 400, 5)}), false, {}).weight_percent, 20);
  EXPECT_EQ(agent_line(agent_reply(report({model("small", 150, 5)}), false, {})), "ready 64%\n");
  // Past the target the more loaded node still weighs less: the order survives overload.
  EXPECT_GT(agent_reply(report({model("small", 600, 5)}), false, {}).weight_percent,
            agent_reply(report({model("small", 1200, 5)}), false, {}).weight_percent);
}

TEST(AgentReply, WorkWithoutATargetDoesNotLowerTheWeight) {
  // A long queue of batch work (no TTFT target) delays no promise the node has made: the weight
  // follows the promised wait, not the whole queue's.
  ModelLoad busy_with_batch = model("small", 4000, 500);
  busy_with_batch.promised_wait_ms = 100;
  EXPECT_EQ(agent_reply(report({busy_with_batch}), false, {}).weight_percent, 80);
}

TEST(AgentReply, ANodeThatJustTurnedArrivalsAwayCountsAsAtItsTarget) {
  // headroom_rps 0 (a busy rejection in the last second) with a short queue: pressure 1.
  EXPECT_EQ(agent_reply(report({model("small", 0, 5, 0)}), false, {}).weight_percent, 50);
  // A longer queue than that still counts.
  EXPECT_EQ(agent_reply(report({model("small", 400, 5, 0)}), false, {}).weight_percent, 20);
}

TEST(AgentReply, AHotNodeKeepsTheFloorWeightNotZero) {
  // Far past its target on the ladder's top rung: the floor, so that a cluster of hot nodes
  // still spreads its traffic and the nodes' admission decides.
  LoadReport hot = report({model("small", 2000, 50)});
  hot.overload_level = to_string(OverloadLevel::kShedInteractive);
  EXPECT_EQ(agent_reply(hot, false, {}).weight_percent, 1);
  AgentReplyOptions options;
  options.min_weight_percent = 5;
  EXPECT_EQ(agent_reply(hot, false, options).weight_percent, 5);
}

TEST(AgentReply, DrainingSaysDrain) {
  const AgentReply reply = agent_reply(report({model("small", 0, 0)}), true, {});
  EXPECT_EQ(reply.state, AgentReply::State::kDrain);
  EXPECT_EQ(agent_line(reply), "drain\n");
}

TEST(AgentReply, NoCapacityMarksTheNodeDownWithTheReason) {
  LoadReport r = report({model("small", 0, 0), model("large", 0, 0)});
  r.models[0].has_capacity = false;
  // One model left: still serving, at the weight of what it can run.
  EXPECT_EQ(agent_reply(r, false, {}).state, AgentReply::State::kReady);
  EXPECT_EQ(agent_reply(r, false, {}).weight_percent, 50);
  r.models[1].has_capacity = false;
  const AgentReply reply = agent_reply(r, false, {});
  EXPECT_EQ(reply.state, AgentReply::State::kDown);
  const std::string line = agent_line(reply);
  // "ready" undoes a drain left by an earlier process; "down" then marks it down; the text
  // after '#' is what the balancer shows.
  EXPECT_EQ(line.rfind("ready down #no capacity", 0), 0u) << line;
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  // Draining wins: the node says drain whatever its engines.
  EXPECT_EQ(agent_line(agent_reply(r, true, {})), "drain\n");
}

TEST(AgentReply, TheBusiestModelWeighsMost) {
  // The small model carries 99 live requests at pressure 2 (0.2); the idle large model has all
  // its room (1). Weighted by live requests + 1: (100 * 0.2 + 1 * 1) / 101, near the busy
  // model's own figure, not the plain mean of the two (0.6).
  EXPECT_EQ(agent_reply(report({model("small", 400, 99), model("large", 0, 0)}), false, {})
                .weight_percent,
            21);
  EXPECT_EQ(
      agent_reply(report({model("small", 0, 0), model("large", 0, 0)}), false, {}).weight_percent,
      100);
}

TEST(AgentReply, EachRungOfTheLadderLowersTheWeight) {
  double previous = 2.0;
  for (int level = 0; level < kOverloadLevels; ++level) {
    const double factor = ladder_weight_factor(to_string(static_cast<OverloadLevel>(level)));
    EXPECT_LT(factor, previous) << to_string(static_cast<OverloadLevel>(level));
    EXPECT_GT(factor, 0.0);
    previous = factor;
  }
  EXPECT_EQ(ladder_weight_factor("normal"), 1.0);
  LoadReport r = report({model("small", 0, 0)});
  r.overload_level = to_string(OverloadLevel::kShedStandard);
  EXPECT_LT(agent_reply(r, false, {}).weight_percent, 100);
}

TEST(AgentReply, APendingLeaseWithinTheHorizonCountsAgainstTheSmallModels) {
  LoadReport r = report({model("small", 0, 10)});
  r.gang_phase = "pending";
  r.lease_expected_ms = 400;
  // Starts now and holds the GPUs for 400 ms: an arrival within the next second waits 400 ms
  // (at t = 0) down to 0 (t >= 400 ms), 80 ms on average: pressure 0.4, weight 1 / 1.16.
  r.lease_start_s = to_seconds(r.at);
  EXPECT_EQ(agent_reply(r, false, {}).weight_percent, 86);
  // Starts after the horizon: nothing now.
  r.lease_start_s = to_seconds(r.at) + 2.0;
  EXPECT_EQ(agent_reply(r, false, {}).weight_percent, 100);
  // The large model's own wait already holds the barrier: no penalty on it.
  LoadReport large = report({model("large", 0, 10)});
  large.gang_phase = "pending";
  large.lease_expected_ms = 400;
  large.lease_start_s = to_seconds(large.at);
  EXPECT_EQ(agent_reply(large, false, {}).weight_percent, 100);
}

}  // namespace
}  // namespace gangway
