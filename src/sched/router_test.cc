// Routing rules on hand-built node states: gangway's predicted-TTFT rule against the warm-busy
// versus cold-idle formula, late binding when nothing is cached, work stealing, and the baselines.

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/input_error.h"
#include "sched/router_registry.h"
#include "sched/ttft_predictor.h"

namespace gangway {
namespace {

constexpr int32_t kBlockTokens = 16;

// A node of `gpus` GPUs with one small model on each, whose prefill costs exactly
// `per_token_us` per token (linear cost model, no fixed part): P(n) = n x per_token.
struct HandBuiltNode {
  NodeSpec node;
  std::unique_ptr<CostModel> cost;
  SchedulerState state;
  std::vector<Sequence> scratch;

  explicit HandBuiltNode(int gpus, double per_token_us = 10.0) {
    node = default_node_spec();
    node.gpu_count = gpus;
    node.models.pop_back();  // small model only
    ModelSpec& model = node.models[0];
    model.gpus.clear();
    for (int g = 0; g < gpus; ++g) model.gpus.emplace_back(g);
    model.cost.kind = CostModelKind::kLinear;
    model.cost.linear_per_prefill_token_s = per_token_us * 1e-6;
    cost = make_cost_model(model, node.hardware);
    state.node = &node;
    state.gpus.resize(gpus);
    state.small_models.resize(1);
    state.small_models[0].model = ModelId(0);
    state.small_models[0].cost = cost.get();
    for (int g = 0; g < gpus; ++g) {
      state.gpus[g].id = GpuId(g);
      state.gpus[g].replicas.push_back(static_cast<uint32_t>(g));
      Replica replica;
      replica.model = ModelId(0);
      replica.gpu = GpuId(g);
      replica.kv = BlockPool(4096);
      replica.kv.attach_host(&state.host, static_cast<uint32_t>(g), 1);
      state.replicas.push_back(std::move(replica));
      state.small_models[0].replicas.push_back(static_cast<uint32_t>(g));
    }
  }

  // Makes `blocks` leading blocks of `hashes` cached on GPU `gpu` (published, unreferenced).
  void warm(int gpu, const std::vector<BlockHash>& hashes, int blocks) {
    BlockPool& pool = state.replicas[gpu].kv;
    std::vector<BlockId> held;
    ASSERT_TRUE(pool.allocate(blocks, held));
    for (int i = 0; i < blocks; ++i) {
      held[i] = pool.publish(held[i], hashes[i], i > 0 ? held[i - 1] : kNoBlock);
    }
    pool.release(held);
  }
};

std::vector<BlockHash> prompt_hashes(uint64_t id, int blocks) {
  std::vector<BlockHash> hashes;
  for (int i = 0; i < blocks; ++i) hashes.push_back(id * 1000003 + static_cast<uint64_t>(i) + 1);
  return hashes;
}

Sequence queued_request(int prompt_tokens, std::vector<BlockHash> hashes) {
  Sequence seq;
  seq.spec.model = ModelId(0);
  seq.spec.prompt_tokens = prompt_tokens;
  seq.spec.max_tokens = 16;
  seq.spec.prefix_blocks = std::move(hashes);
  seq.prefill_target_tokens = prompt_tokens;
  seq.state = SequenceState::kQueued;
  return seq;
}

// Cache-aware routing's trade: a prefix hit saves a fraction h of the prefill P; wait
// for the busy warm GPU rather than take the idle cold one exactly when the warm GPU's extra wait
// is below h x P. With P(n) = n x t this is: tokens ahead there < cached tokens.
TEST(PredictedTtftRouter, PicksTheWarmGpuExactlyWhenItsWaitIsBelowTheSavedPrefill) {
  HandBuiltNode hand(2);
  constexpr int kPrompt = 2000;  // P = 2000 x 10 us = 20 ms
  const std::vector<BlockHash> hashes = prompt_hashes(7, kPrompt / kBlockTokens);
  constexpr int kWarmBlocks = 100;  // h = 1600 / 2000 = 0.8
  hand.warm(0, hashes, kWarmBlocks);
  const int cached = kWarmBlocks * kBlockTokens;
  const Sequence seq = queued_request(kPrompt, hashes);
  std::unique_ptr<Router> router = make_router("predicted-ttft");
  // Sweep the warm GPU's backlog (resident prefill work ahead of the newcomer) across h x P.
  for (int ahead = 0; ahead <= 2 * cached; ahead += 100) {
    hand.state.replicas[0].resident_prefill_tokens = ahead;
    const std::optional<uint32_t> chosen = router->route(hand.state, seq, Time::zero());
    ASSERT_TRUE(chosen.has_value()) << "a replica holds part of the prompt: bind early";
    const bool warm_expected = ahead < cached;  // wait = ahead x t < h x P = cached x t
    if (ahead == cached) continue;              // a tie either way
    EXPECT_EQ(*chosen == 0, warm_expected) << "backlog " << ahead << " tokens (" << ahead * 10
                                           << " us) vs saved prefill " << cached * 10 << " us";
  }
}

// The same rule with the default roofline cost model, whose prefill is not linear (a cached
// prefix still costs attention): the warm GPU wins exactly while its wait is below
// P(full) - P(uncached | cached), the prefill it saves.
TEST(PredictedTtftRouter, WithTheRooflineModelTheThresholdIsTheSavedPrefillTime) {
  HandBuiltNode hand(2);
  ModelSpec& model = hand.node.models[0];
  model.cost = CostModelSpec{};  // roofline
  hand.cost = make_cost_model(model, hand.node.hardware);
  hand.state.small_models[0].cost = hand.cost.get();
  const int prompt = 4096;
  const std::vector<BlockHash> hashes = prompt_hashes(3, prompt / kBlockTokens);
  hand.warm(0, hashes, 200);  // h = 3200 / 4096
  const Sequence seq = queued_request(prompt, hashes);
  TtftPredictor predictor;
  predictor.initialise(hand.state);
  const Duration saved = predictor.prefill_time(hand.state, ModelId(0), prompt, 0) -
                         predictor.prefill_time(hand.state, ModelId(0), prompt - 3200, 3200);
  ASSERT_GT(saved, Duration(0));
  std::unique_ptr<Router> router = make_router("predicted-ttft");
  int switched_at = -1;
  for (int ahead = 0; ahead <= 8000; ahead += 16) {
    hand.state.replicas[0].resident_prefill_tokens = ahead;
    const Duration wait = predictor.wait(hand.state, hand.state.replicas[0], ahead, Time::zero());
    const std::optional<uint32_t> chosen = router->route(hand.state, seq, Time::zero());
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(*chosen == 0, wait < saved)
        << "wait " << to_ms(wait) << " ms, saved " << to_ms(saved) << " ms";
    if (*chosen == 1 && switched_at < 0) switched_at = ahead;
  }
  EXPECT_GT(switched_at, 0) << "the sweep must cross the threshold";
}

TEST(PredictedTtftRouter, LeavesARequestNoReplicaHasCachedToLateBinding) {
  HandBuiltNode hand(4);
  hand.warm(2, prompt_hashes(1, 8), 8);
  std::unique_ptr<Router> router = make_router("predicted-ttft");
  const Sequence cold = queued_request(256, prompt_hashes(9, 16));
  EXPECT_FALSE(router->route(hand.state, cold, Time::zero()).has_value());
  const Sequence warm = queued_request(256, prompt_hashes(1, 16));
  EXPECT_EQ(router->route(hand.state, warm, Time::zero()), std::optional<uint32_t>(2));
}

// Requests queued at a warm GPU will themselves hit its cache: the work ahead of a newcomer there
// is their uncached part, not their whole prompts. Three queued requests of the newcomer's own
// group prompt (80 % cached) leave 3 x 400 tokens of prefill ahead (12 ms), less than the 16 ms
// the newcomer's own hit saves, so the warm GPU wins; counted gross (3 x 2,000 tokens, 60 ms)
// the idle cold GPU would.
TEST(PredictedTtftRouter, CountsQueuedPromptsNetOfTheirCacheHitsThere) {
  HandBuiltNode hand(2);
  constexpr int kPrompt = 2000;
  const std::vector<BlockHash> hashes = prompt_hashes(7, kPrompt / kBlockTokens);
  constexpr int kWarmBlocks = 100;  // 1,600 of 2,000 tokens
  hand.warm(0, hashes, kWarmBlocks);
  Replica& warm = hand.state.replicas[0];
  hand.scratch.reserve(3);
  for (SequenceHandle h = 0; h < 3; ++h) {
    hand.scratch.push_back(queued_request(kPrompt, hashes));
    Sequence& queued = hand.scratch.back();
    const int32_t cached = TtftPredictor::cached_tokens(hand.state, warm, queued);
    EXPECT_EQ(cached, kWarmBlocks * kBlockTokens);
    warm.queue.push(h, queued, static_cast<int64_t>(h), cached);
    EXPECT_EQ(queued.queue_tokens, kPrompt - cached);
  }
  EXPECT_EQ(warm.queue.queued_tokens(), 3 * (kPrompt - kWarmBlocks * kBlockTokens));
  std::unique_ptr<Router> router = make_router("predicted-ttft");
  const Sequence newcomer = queued_request(kPrompt, hashes);
  EXPECT_EQ(router->route(hand.state, newcomer, Time::zero()), std::optional<uint32_t>(0));
  // Taken off the queue, each gives back what it added.
  for (SequenceHandle h = 0; h < 3; ++h) warm.queue.erase(h, hand.scratch[h]);
  EXPECT_EQ(warm.queue.queued_tokens(), 0);
}

// A queued request always counts at least its last prompt token, which is computed even when
// the rest is cached; one with computed KV of its own (preempted and requeued) counts its
// remaining prompt whatever the cache holds.
TEST(PredictedTtftRouter, QueuedWorkCountsAtLeastTheLastTokenAndNoHitForComputedKv) {
  HandBuiltNode hand(1);
  const std::vector<BlockHash> hashes = prompt_hashes(3, 8);
  hand.warm(0, hashes, 8);
  Replica& replica = hand.state.replicas[0];
  Sequence whole = queued_request(8 * kBlockTokens, hashes);
  replica.queue.push(0, whole, 0, 8 * kBlockTokens);
  EXPECT_EQ(whole.queue_tokens, 1);
  Sequence resumed = queued_request(8 * kBlockTokens, hashes);
  resumed.kv_tokens = 3 * kBlockTokens;
  EXPECT_EQ(TtftPredictor::cached_tokens(hand.state, replica, resumed), 0);
  replica.queue.push(1, resumed, 1, TtftPredictor::cached_tokens(hand.state, replica, resumed));
  EXPECT_EQ(resumed.queue_tokens, 5 * kBlockTokens);
  EXPECT_EQ(replica.queue.queued_tokens(), 1 + 5 * kBlockTokens);
}

TEST(PredictedTtftRouter, CountsTheGangBlackoutAndTheIterationInFlight) {
  HandBuiltNode hand(2);
  TtftPredictor predictor;
  predictor.initialise(hand.state);
  const Time now = Time::zero() + std::chrono::milliseconds(100);
  EXPECT_EQ(predictor.wait(hand.state, hand.state.replicas[0], 0, now), Duration(0));
  hand.state.gpus[0].small_busy = true;
  hand.state.gpus[0].predicted_free = now + std::chrono::milliseconds(7);
  EXPECT_EQ(predictor.wait(hand.state, hand.state.replicas[0], 0, now),
            std::chrono::milliseconds(7));
  // Every GPU waits out an active gang phase: the typical phase length from its start.
  LargeModelRuntime large;
  hand.state.large = std::move(large);
  hand.state.gang.phase = GangPhase::kActive;
  hand.state.gang.active_since = now - std::chrono::milliseconds(30);
  hand.state.gang.typical_phase = std::chrono::milliseconds(100);
  EXPECT_EQ(predictor.blackout(hand.state, now), std::chrono::milliseconds(70));
  EXPECT_EQ(predictor.wait(hand.state, hand.state.replicas[1], 0, now),
            std::chrono::milliseconds(70));
}

TEST(PredictedTtftRouter, AnIdleReplicaStealsTheRequestThatGainsMost) {
  HandBuiltNode hand(2);
  std::vector<Sequence>& seqs = hand.state.sequences;
  // Replica 0 has 10,000 prefill tokens resident (100 ms at 10 us a token) and two queued
  // requests: one warm there (its 1,600-token prefix cached: moving costs 16 ms of prefill, it
  // gains 84 ms) and one cold everywhere (moving gains the whole backlog).
  hand.state.replicas[0].resident_prefill_tokens = 10000;
  const std::vector<BlockHash> warm_hashes = prompt_hashes(1, 125);
  hand.warm(0, warm_hashes, 100);
  seqs.push_back(queued_request(2000, warm_hashes));
  seqs.push_back(queued_request(2000, prompt_hashes(2, 125)));
  for (SequenceHandle h = 0; h < 2; ++h) {
    seqs[h].queued_replica = 0;
    hand.state.replicas[0].queue.push(h, seqs[h], static_cast<int64_t>(h));
  }
  std::unique_ptr<Router> router = make_router("predicted-ttft");
  const std::optional<SequenceHandle> stolen = router->steal(hand.state, 1, Time::zero());
  ASSERT_TRUE(stolen.has_value());
  EXPECT_EQ(*stolen, 1u) << "the request with the least affinity to where it waits moves";
  // With no backlog there and only the warm request queued, nothing is worth moving.
  hand.state.replicas[0].resident_prefill_tokens = 0;
  hand.state.replicas[0].queue.erase(1, seqs[1]);
  EXPECT_FALSE(router->steal(hand.state, 1, Time::zero()).has_value());
}

TEST(BaselineRouters, RoundRobinTakesReplicasInTurn) {
  HandBuiltNode hand(3);
  std::unique_ptr<Router> router = make_router("round-robin");
  const Sequence seq = queued_request(64, prompt_hashes(1, 4));
  std::vector<uint32_t> chosen;
  for (int i = 0; i < 6; ++i) chosen.push_back(*router->route(hand.state, seq, Time::zero()));
  EXPECT_EQ(chosen, (std::vector<uint32_t>{0, 1, 2, 0, 1, 2}));
}

TEST(BaselineRouters, LeastLoadedCountsOutstandingRequests) {
  HandBuiltNode hand(3);
  hand.state.replicas[0].running = {0, 1, 2};
  hand.state.replicas[1].running = {3};
  hand.state.replicas[2].running = {4, 5};
  std::unique_ptr<Router> router = make_router("least-loaded");
  EXPECT_EQ(router->route(hand.state, queued_request(64, {}), Time::zero()),
            std::optional<uint32_t>(1));
}

TEST(BaselineRouters, CacheOnlyFollowsTheLongestMatchWhateverTheLoad) {
  HandBuiltNode hand(3);
  const std::vector<BlockHash> hashes = prompt_hashes(5, 20);
  hand.warm(1, hashes, 4);
  hand.warm(2, hashes, 12);
  hand.state.replicas[2].resident_prefill_tokens = 1 << 20;
  hand.state.replicas[2].running = {0, 1, 2, 3, 4, 5, 6, 7};
  std::unique_ptr<Router> router = make_router("cache-only");
  EXPECT_EQ(router->route(hand.state, queued_request(400, hashes), Time::zero()),
            std::optional<uint32_t>(2));
  // Nothing cached anywhere: the least loaded.
  EXPECT_EQ(router->route(hand.state, queued_request(400, prompt_hashes(6, 20)), Time::zero()),
            std::optional<uint32_t>(0));
}

TEST(BaselineRouters, SglangBalancesWhenImbalancedElseFollowsAGoodEnoughMatch) {
  HandBuiltNode hand(2);
  const std::vector<BlockHash> hashes = prompt_hashes(5, 20);
  hand.warm(1, hashes, 10);  // 160 of 320 tokens: ratio 0.5 > 0.3
  hand.state.replicas[1].running = {0, 1, 2, 3};
  std::unique_ptr<Router> router = make_router("sglang");
  EXPECT_EQ(router->route(hand.state, queued_request(320, hashes), Time::zero()),
            std::optional<uint32_t>(1))
      << "balanced (4 vs 0 is within 64): the match wins";
  EXPECT_EQ(router->route(hand.state, queued_request(1600, hashes), Time::zero()),
            std::optional<uint32_t>(0))
      << "160 of 1600 tokens is a ratio of 0.1 <= 0.3: least loaded";
  hand.state.replicas[1].running.assign(100, 0);
  hand.state.replicas[0].running.assign(10, 0);
  EXPECT_EQ(router->route(hand.state, queued_request(320, hashes), Time::zero()),
            std::optional<uint32_t>(0))
      << "100 vs 10 exceeds both thresholds (64 and 1.5x): least loaded";
}

TEST(RouterRegistry, UnknownNamesAreInputErrorsListingTheKnownOnes) {
  EXPECT_TRUE(is_router_name("predicted-ttft"));
  EXPECT_FALSE(is_router_name("random"));
  try {
    make_router("random");
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("scheduler.routing"), std::string::npos) << message;
    EXPECT_NE(message.find("sglang"), std::string::npos) << message;
  }
  for (const std::string& name : router_names()) EXPECT_EQ(make_router(name)->name(), name);
}

}  // namespace
}  // namespace gangway
