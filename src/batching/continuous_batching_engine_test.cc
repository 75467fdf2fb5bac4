#include "batching/continuous_batching_engine.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "model/constant_cost_model.h"

namespace gangway {
namespace {

constexpr int kMaxIterations = 10000;

EngineLimits small_limits() {
  EngineLimits limits;
  limits.kv_blocks = 64;
  limits.block_tokens = 16;
  limits.max_num_seqs = 4;
  limits.max_num_batched_tokens = 64;
  limits.max_model_len = 1024;
  return limits;
}

EngineRequest request(uint64_t id, int32_t prompt, int32_t max_tokens) {
  EngineRequest r;
  r.id = id;
  r.prompt_tokens = prompt;
  r.max_tokens = max_tokens;
  r.stop_after_tokens = max_tokens;
  return r;
}

// Runs iterations until idle (bounded); returns every update, in order.
std::vector<RequestUpdate> run_until_idle(ContinuousBatchingEngine& engine) {
  std::vector<RequestUpdate> all;
  for (int i = 0; i < kMaxIterations; ++i) {
    if (!engine.begin_iteration()) break;
    for (const RequestUpdate& update : engine.end_iteration()) all.push_back(update);
  }
  return all;
}

struct Fixture : ::testing::Test {
  ConstantCostModel cost{0.01};
};

using ContinuousBatchingEngineTest = Fixture;

TEST_F(ContinuousBatchingEngineTest, IterationTakesTheCostModelsTime) {
  ContinuousBatchingEngine engine(cost, small_limits());
  EXPECT_FALSE(engine.begin_iteration().has_value()) << "idle: nothing to run";
  ASSERT_EQ(engine.add(request(1, 10, 2)), ContinuousBatchingEngine::AddResult::kAccepted);
  const auto duration = engine.begin_iteration();
  ASSERT_TRUE(duration.has_value());
  EXPECT_EQ(*duration, std::chrono::milliseconds(10));
}

TEST_F(ContinuousBatchingEngineTest, EveryRequestGetsItsTokensAndOneFinish) {
  ContinuousBatchingEngine engine(cost, small_limits());
  for (uint64_t id = 1; id <= 6; ++id) engine.add(request(id, 20, 5));
  std::map<uint64_t, int> tokens;
  std::map<uint64_t, int> finishes;
  for (const RequestUpdate& update : run_until_idle(engine)) {
    tokens[update.id] += update.new_tokens;
    if (update.finished) {
      ++finishes[update.id];
      EXPECT_EQ(update.reason, FinishReason::kLength);
      EXPECT_EQ(update.output_tokens, 5);
    }
  }
  for (uint64_t id = 1; id <= 6; ++id) {
    EXPECT_EQ(tokens[id], 5) << id;
    EXPECT_EQ(finishes[id], 1) << id;
  }
  EXPECT_EQ(engine.running(), 0);
  EXPECT_EQ(engine.used_blocks(), 0);
  EXPECT_EQ(engine.counters().generation_tokens, 30);
  EXPECT_EQ(engine.counters().prompt_tokens, 120);
}

TEST_F(ContinuousBatchingEngineTest, StopsAtTheDrawnLengthBeforeMaxTokens) {
  ContinuousBatchingEngine engine(cost, small_limits());
  EngineRequest r = request(1, 8, 10);
  r.stop_after_tokens = 3;
  engine.add(r);
  const auto updates = run_until_idle(engine);
  ASSERT_FALSE(updates.empty());
  EXPECT_TRUE(updates.back().finished);
  EXPECT_EQ(updates.back().reason, FinishReason::kStop);
  EXPECT_EQ(updates.back().output_tokens, 3);
}

TEST_F(ContinuousBatchingEngineTest, RunningSetIsLimitedByMaxNumSeqs) {
  ContinuousBatchingEngine engine(cost, small_limits());
  for (uint64_t id = 1; id <= 10; ++id) engine.add(request(id, 4, 50));
  ASSERT_TRUE(engine.begin_iteration());
  EXPECT_EQ(engine.running(), 4);
  EXPECT_EQ(engine.waiting(), 6);
}

TEST_F(ContinuousBatchingEngineTest, LongPromptIsPrefilledInChunksOfTheTokenBudget) {
  ContinuousBatchingEngine engine(cost, small_limits());
  engine.add(request(1, 200, 1));  // 200 tokens at 64 per iteration: 4 iterations
  int iterations = 0;
  std::vector<RequestUpdate> updates;
  for (int i = 0; i < 10 && engine.begin_iteration(); ++i) {
    ++iterations;
    updates = engine.end_iteration();
    if (!updates.empty()) break;
  }
  EXPECT_EQ(iterations, 4);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_TRUE(updates[0].first_token);
  EXPECT_TRUE(updates[0].finished);
  EXPECT_EQ(engine.counters().prompt_tokens, 200);
}

TEST_F(ContinuousBatchingEngineTest, DecodesGoFirstAndPrefillTakesTheRestOfTheBudget) {
  ContinuousBatchingEngine engine(cost, small_limits());
  engine.add(request(1, 10, 100));
  ASSERT_TRUE(engine.begin_iteration());
  engine.end_iteration();  // request 1 prefilled; it decodes from now on
  engine.add(request(2, 500, 1));
  ASSERT_TRUE(engine.begin_iteration());
  engine.end_iteration();
  // One decode token for request 1, the other 63 for request 2's prompt.
  EXPECT_EQ(engine.counters().prompt_tokens, 10 + 63);
  EXPECT_EQ(engine.counters().generation_tokens, 2);
}

TEST_F(ContinuousBatchingEngineTest, KvCapacityLimitsAdmission) {
  EngineLimits limits = small_limits();
  limits.kv_blocks = 4;  // 64 tokens
  limits.max_num_batched_tokens = 256;
  ContinuousBatchingEngine engine(cost, limits);
  engine.add(request(1, 40, 2));  // 3 blocks
  engine.add(request(2, 40, 2));  // 3 more: does not fit beside request 1
  ASSERT_TRUE(engine.begin_iteration());
  EXPECT_EQ(engine.running(), 1);
  EXPECT_EQ(engine.waiting(), 1);
  EXPECT_EQ(engine.used_blocks(), 3);
  EXPECT_DOUBLE_EQ(engine.kv_usage(), 0.75);
  std::vector<RequestUpdate> updates = engine.end_iteration();
  for (const auto& update : run_until_idle(engine)) updates.push_back(update);
  int finished = 0;
  for (const auto& update : updates) finished += update.finished ? 1 : 0;
  EXPECT_EQ(finished, 2) << "request 2 runs once request 1 frees its blocks";
  EXPECT_LE(engine.used_blocks(), limits.kv_blocks);
}

TEST_F(ContinuousBatchingEngineTest, FullCachePreemptsTheLatestRequestAndRecomputesIt) {
  EngineLimits limits = small_limits();
  limits.kv_blocks = 4;
  limits.max_num_batched_tokens = 256;
  ContinuousBatchingEngine engine(cost, limits);
  engine.add(request(1, 32, 20));  // 2 blocks, growing to 4 while it decodes
  engine.add(request(2, 32, 20));
  std::map<uint64_t, int> tokens;
  std::map<uint64_t, int> finishes;
  for (const auto& update : run_until_idle(engine)) {
    tokens[update.id] += update.new_tokens;
    finishes[update.id] += update.finished ? 1 : 0;
  }
  EXPECT_GT(engine.counters().preemptions, 0);
  EXPECT_EQ(tokens[1], 20);
  EXPECT_EQ(tokens[2], 20);
  EXPECT_EQ(finishes[1], 1);
  EXPECT_EQ(finishes[2], 1);
}

TEST_F(ContinuousBatchingEngineTest, RejectsWhatCanNeverRun) {
  ContinuousBatchingEngine engine(cost, small_limits());
  EXPECT_EQ(engine.add(request(1, 1000, 100)), ContinuousBatchingEngine::AddResult::kTooLong);
  EXPECT_EQ(engine.add(request(2, 0, 1)), ContinuousBatchingEngine::AddResult::kInvalid);
  EXPECT_EQ(engine.add(request(3, 10, 1)), ContinuousBatchingEngine::AddResult::kAccepted);
  EXPECT_EQ(engine.add(request(3, 10, 1)), ContinuousBatchingEngine::AddResult::kDuplicate);
}

TEST_F(ContinuousBatchingEngineTest, PauseKeepFreezesTokensAndKeepsKv) {
  ContinuousBatchingEngine engine(cost, small_limits());
  engine.add(request(1, 10, 100));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(engine.begin_iteration());
    engine.end_iteration();
  }
  const int64_t tokens_before = engine.counters().generation_tokens;
  const int64_t blocks_before = engine.used_blocks();
  EXPECT_TRUE(engine.pause(PauseMode::kKeep).empty());
  EXPECT_TRUE(engine.is_paused());
  EXPECT_TRUE(engine.pause_complete());
  engine.add(request(2, 10, 5));  // accepted, waits for resume
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(engine.begin_iteration().has_value());
  EXPECT_EQ(engine.counters().generation_tokens, tokens_before);
  EXPECT_EQ(engine.used_blocks(), blocks_before);
  EXPECT_EQ(engine.running(), 1);
  EXPECT_EQ(engine.waiting(), 1);
  engine.resume();
  EXPECT_FALSE(engine.is_paused());
  ASSERT_TRUE(engine.begin_iteration());
  const auto updates = engine.end_iteration();
  ASSERT_FALSE(updates.empty());
  EXPECT_EQ(updates[0].id, 1u);
  EXPECT_EQ(updates[0].output_tokens, 4) << "request 1 goes on where it was";
}

TEST_F(ContinuousBatchingEngineTest, PauseDuringAnIterationLetsItFinish) {
  ContinuousBatchingEngine engine(cost, small_limits());
  engine.add(request(1, 10, 100));
  ASSERT_TRUE(engine.begin_iteration());
  engine.pause(PauseMode::kKeep);
  EXPECT_FALSE(engine.pause_complete()) << "an iteration is in flight";
  EXPECT_EQ(engine.end_iteration().size(), 1u);
  EXPECT_TRUE(engine.pause_complete());
}

TEST_F(ContinuousBatchingEngineTest, PauseWaitDrainsStartedRequestsAndHoldsNewOnes) {
  EngineLimits limits = small_limits();
  limits.max_num_seqs = 2;
  ContinuousBatchingEngine engine(cost, limits);
  engine.add(request(1, 10, 5));
  engine.add(request(2, 10, 8));
  engine.add(request(3, 10, 5));  // waits: max_num_seqs is 2
  ASSERT_TRUE(engine.begin_iteration());
  engine.end_iteration();
  engine.pause(PauseMode::kWait);
  EXPECT_FALSE(engine.pause_complete());
  std::map<uint64_t, int> finishes;
  for (const auto& update : run_until_idle(engine)) {
    finishes[update.id] += update.finished ? 1 : 0;
  }
  EXPECT_EQ(finishes[1], 1);
  EXPECT_EQ(finishes[2], 1);
  EXPECT_EQ(finishes.count(3), 0u) << "a request that had not started waits for resume";
  EXPECT_TRUE(engine.pause_complete());
  EXPECT_EQ(engine.waiting(), 1);
  engine.resume();
  for (const auto& update : run_until_idle(engine)) {
    finishes[update.id] += update.finished ? 1 : 0;
  }
  EXPECT_EQ(finishes[3], 1);
}

TEST_F(ContinuousBatchingEngineTest, PauseAbortEndsEverythingExactlyOnce) {
  ContinuousBatchingEngine engine(cost, small_limits());
  for (uint64_t id = 1; id <= 6; ++id) engine.add(request(id, 10, 50));
  ASSERT_TRUE(engine.begin_iteration());
  const auto aborted = engine.pause(PauseMode::kAbort);
  ASSERT_EQ(aborted.size(), 6u);
  for (const auto& update : aborted) {
    EXPECT_TRUE(update.finished);
    EXPECT_EQ(update.reason, FinishReason::kAbort);
  }
  // The iteration in flight delivers nothing for the aborted requests.
  EXPECT_TRUE(engine.end_iteration().empty());
  EXPECT_TRUE(engine.pause_complete());
  EXPECT_EQ(engine.running(), 0);
  EXPECT_EQ(engine.waiting(), 0);
  EXPECT_EQ(engine.used_blocks(), 0);
  for (uint64_t id = 1; id <= 6; ++id) EXPECT_FALSE(engine.abort(id).has_value());
  EXPECT_TRUE(engine.pause(PauseMode::kAbort).empty());
  EXPECT_EQ(engine.counters().finished[static_cast<size_t>(FinishReason::kAbort)], 6);
}

TEST_F(ContinuousBatchingEngineTest, AbortFreesTheRequestOnce) {
  ContinuousBatchingEngine engine(cost, small_limits());
  engine.add(request(1, 40, 50));
  ASSERT_TRUE(engine.begin_iteration());
  engine.end_iteration();
  EXPECT_GT(engine.used_blocks(), 0);
  const auto update = engine.abort(1);
  ASSERT_TRUE(update.has_value());
  EXPECT_EQ(update->reason, FinishReason::kAbort);
  EXPECT_EQ(update->output_tokens, 1);
  EXPECT_FALSE(engine.abort(1).has_value());
  EXPECT_EQ(engine.used_blocks(), 0);
  EXPECT_FALSE(engine.begin_iteration().has_value());
}

}  // namespace
}  // namespace gangway
