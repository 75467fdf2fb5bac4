#include "kv/block_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "core/mix64.h"
#include "kv/block_hash_map.h"
#include "kv/host_kv_tier.h"

namespace gangway {
namespace {

// A made-up prompt's chained block hashes: the first `shared` blocks are a common system prompt
// (content 0), the rest prompt `id`'s own text. Each hash covers its block and everything before
// it, as RequestSpec::prefix_blocks does.
std::vector<BlockHash> chain(uint64_t id, int n, int shared = 0) {
  std::vector<BlockHash> hashes;
  uint64_t previous = 0x6a09e667f3bcc908ULL;
  for (int i = 0; i < n; ++i) {
    const uint64_t content = i < shared ? 0 : id;
    previous = mix64(previous * 0x9e3779b97f4a7c15ULL ^ mix64(content + static_cast<uint64_t>(i)));
    hashes.push_back(previous);
  }
  return hashes;
}

// What a sequence does: take its cached prefix, allocate the rest, publish the prompt blocks.
std::vector<BlockId> run_prompt(BlockPool& pool, const std::vector<BlockHash>& hashes) {
  std::vector<BlockId> held;
  const int32_t hit = pool.match(hashes);
  pool.acquire(hashes, hit, held);
  EXPECT_TRUE(pool.allocate(static_cast<int64_t>(hashes.size()) - hit, held));
  for (size_t i = static_cast<size_t>(hit); i < hashes.size(); ++i) {
    held[i] = pool.publish(held[i], hashes[i], i > 0 ? held[i - 1] : kNoBlock);
  }
  pool.check();
  return held;
}

TEST(BlockHashMap, AgreesWithUnorderedMapUnderRandomInsertsAndErases) {
  std::mt19937_64 rng(7);
  BlockHashMap map;
  std::unordered_map<uint64_t, uint32_t> reference;
  for (int step = 0; step < 200000; ++step) {
    const uint64_t key = rng() % 5000;  // small key space: many collisions and re-inserts
    const int action = static_cast<int>(rng() % 3);
    if (action < 2) {
      const auto value = static_cast<uint32_t>(rng() % 1000);
      map.insert(key, value);
      reference[key] = value;
    } else {
      EXPECT_EQ(map.erase(key), reference.erase(key) > 0);
    }
    if (step % 997 == 0) {
      ASSERT_EQ(map.size(), reference.size());
      for (const auto& [k, v] : reference) ASSERT_EQ(map.find(k), v) << "key " << k;
    }
  }
  for (uint64_t key = 0; key < 5000; ++key) {
    const auto it = reference.find(key);
    EXPECT_EQ(map.find(key), it == reference.end() ? BlockHashMap::kAbsent : it->second);
  }
}

TEST(BlockPool, FreshPoolIsAllUnused) {
  BlockPool pool(10);
  EXPECT_EQ(pool.capacity_blocks(), 10);
  EXPECT_EQ(pool.unused_blocks(), 10);
  EXPECT_EQ(pool.available_blocks(), 10);
  EXPECT_EQ(pool.used_blocks(), 0);
  EXPECT_EQ(pool.match(chain(1, 4)), 0);
  pool.check();
}

TEST(BlockPool, ASecondIdenticalPromptHitsEveryPublishedBlock) {
  BlockPool pool(16);
  const std::vector<BlockHash> prompt = chain(1, 5);
  std::vector<BlockId> first = run_prompt(pool, prompt);
  EXPECT_EQ(pool.match(prompt), 5);
  EXPECT_EQ(pool.used_blocks(), 5);
  // While the first holds them, a second shares them: refcount 2, no new block.
  std::vector<BlockId> second;
  pool.acquire(prompt, 5, second);
  EXPECT_EQ(second, first);
  EXPECT_EQ(pool.refs_of(first[0]), 2);
  EXPECT_EQ(pool.used_blocks(), 5);
  EXPECT_EQ(pool.references(), 10);
  pool.release(first);
  pool.release(second);
  // Nobody holds them now: cached, available, still hit.
  EXPECT_EQ(pool.used_blocks(), 0);
  EXPECT_EQ(pool.cached_blocks(), 5);
  EXPECT_EQ(pool.available_blocks(), 16);
  EXPECT_EQ(pool.match(prompt), 5);
  pool.check();
}

TEST(BlockPool, MatchStopsWhereThePromptsDiverge) {
  BlockPool pool(32);
  pool.release(run_prompt(pool, chain(1, 8, 3)));
  EXPECT_EQ(pool.match(chain(2, 8, 3)), 3) << "shares only the 3-block system prompt";
  EXPECT_EQ(pool.match(chain(1, 12, 3)), 8) << "a longer turn of the same conversation";
  EXPECT_EQ(pool.match(chain(1, 4, 3)), 4);
  EXPECT_EQ(pool.match(chain(3, 8, 0)), 0);
}

TEST(BlockPool, EvictsLeastRecentlyUsedLeavesFirst) {
  BlockPool pool(6);
  // Prompt A: system prompt S (2 blocks) + 1 own block; prompt B: S + 1 own block.
  const std::vector<BlockHash> a = chain(1, 3, 2);
  const std::vector<BlockHash> b = chain(2, 3, 2);
  pool.release(run_prompt(pool, a));  // S0 S1 A2 cached, A2 oldest
  pool.release(run_prompt(pool, b));  // B2 cached; S0 S1 touched again (now the newest)
  EXPECT_EQ(pool.cached_blocks(), 4);
  EXPECT_EQ(pool.unused_blocks(), 2);
  // Three fresh blocks: two unused, then one eviction: the oldest leaf, A's own block; the
  // shared S0 S1 were touched again by B and are parents anyway.
  std::vector<BlockId> fresh;
  ASSERT_TRUE(pool.allocate(3, fresh));
  EXPECT_EQ(pool.evicted_blocks(), 1);
  EXPECT_EQ(pool.match(a), 2);
  EXPECT_EQ(pool.match(b), 3);
  pool.check();
  // Next: B2 (the only other leaf), then S1, then S0.
  ASSERT_TRUE(pool.allocate(1, fresh));
  EXPECT_EQ(pool.match(b), 2);
  ASSERT_TRUE(pool.allocate(1, fresh));
  EXPECT_EQ(pool.match(b), 1);
  ASSERT_TRUE(pool.allocate(1, fresh));
  EXPECT_EQ(pool.match(b), 0);
  EXPECT_FALSE(pool.allocate(1, fresh)) << "everything is held";
  pool.check();
}

TEST(BlockPool, HeldBlocksAreNeverEvicted) {
  BlockPool pool(4);
  const std::vector<BlockId> held = run_prompt(pool, chain(1, 3));
  std::vector<BlockId> fresh;
  EXPECT_TRUE(pool.allocate(1, fresh));
  EXPECT_FALSE(pool.allocate(1, fresh));
  EXPECT_EQ(pool.match(chain(1, 3)), 3);
  EXPECT_EQ(pool.evicted_blocks(), 0);
}

TEST(BlockPool, PublishingADuplicateMovesTheReferenceToTheIndexedBlock) {
  BlockPool pool(8);
  const std::vector<BlockHash> prompt = chain(1, 2);
  // Two sequences prefill the same prompt at once: both allocate privately.
  std::vector<BlockId> first;
  std::vector<BlockId> second;
  ASSERT_TRUE(pool.allocate(2, first));
  ASSERT_TRUE(pool.allocate(2, second));
  first[0] = pool.publish(first[0], prompt[0], kNoBlock);
  first[1] = pool.publish(first[1], prompt[1], first[0]);
  second[0] = pool.publish(second[0], prompt[0], kNoBlock);
  second[1] = pool.publish(second[1], prompt[1], second[0]);
  EXPECT_EQ(second, first) << "the second copy is given up for the indexed one";
  EXPECT_EQ(pool.used_blocks(), 2);
  EXPECT_EQ(pool.unused_blocks(), 6);
  EXPECT_EQ(pool.refs_of(first[1]), 2);
  pool.check();
}

TEST(BlockPool, ReleasingABlockNobodyHoldsThrows) {
  BlockPool pool(4);
  std::vector<BlockId> held;
  ASSERT_TRUE(pool.allocate(1, held));
  pool.release(held);
  EXPECT_THROW(pool.release(held), std::logic_error);
}

TEST(BlockPool, PublishingUnderAnUnindexedParentThrows) {
  BlockPool pool(4);
  std::vector<BlockId> held;
  ASSERT_TRUE(pool.allocate(2, held));
  EXPECT_THROW(pool.publish(held[1], 42, held[0]), std::logic_error);
}

TEST(BlockPool, WithPrefixCachingOffNothingIsKept) {
  BlockPool pool(8);
  pool.set_prefix_caching(false);
  pool.release(run_prompt(pool, chain(1, 4)));
  EXPECT_EQ(pool.match(chain(1, 4)), 0);
  EXPECT_EQ(pool.cached_blocks(), 0);
  EXPECT_EQ(pool.unused_blocks(), 8);
}

TEST(BlockPool, CapacityShrinksOnlyIntoAvailableBlocksAndGrowsBack) {
  BlockPool pool(8, 12);
  EXPECT_EQ(pool.max_capacity_blocks(), 12);
  const std::vector<BlockId> held = run_prompt(pool, chain(1, 3));
  pool.release(run_prompt(pool, chain(2, 3)));  // 3 cached
  EXPECT_TRUE(pool.set_capacity(12));
  EXPECT_EQ(pool.available_blocks(), 9);
  EXPECT_FALSE(pool.set_capacity(2)) << "3 blocks are held";
  EXPECT_EQ(pool.capacity_blocks(), 12);
  EXPECT_TRUE(pool.set_capacity(4)) << "unused first, then the cached ones are evicted";
  EXPECT_EQ(pool.capacity_blocks(), 4);
  EXPECT_EQ(pool.match(chain(2, 3)), 1);
  EXPECT_EQ(pool.used_blocks(), 3);
  pool.check();
  EXPECT_TRUE(pool.set_capacity(10));
  EXPECT_EQ(pool.available_blocks(), 7);
  pool.check();
}

TEST(BlockPool, DropCachedForgetsUnheldPrefixesButKeepsHeldOnes) {
  HostKvTier host(1000, true);
  BlockPool pool(8);
  pool.attach_host(&host, 5, 100);
  // Prompt A (3 blocks) cached and released; prompt B shares A's first two blocks and is held.
  const std::vector<BlockHash> a = chain(1, 3, 2);
  const std::vector<BlockHash> b = chain(2, 3, 2);
  pool.release(run_prompt(pool, a));
  const std::vector<BlockId> held = run_prompt(pool, b);
  EXPECT_EQ(pool.cached_blocks(), 1);  // A's own block; the shared two are held by B
  pool.drop_cached();
  EXPECT_EQ(pool.cached_blocks(), 0);
  EXPECT_EQ(pool.match(a), 2) << "the shared blocks are held, so still indexed";
  EXPECT_EQ(pool.match(b), 3);
  EXPECT_EQ(pool.evicted_blocks(), 0) << "a lost block is not an eviction";
  EXPECT_EQ(host.kept_blocks(), 0) << "the contents are gone: nothing goes to the host tier";
  EXPECT_EQ(pool.unused_blocks(), 5);
  pool.check();
  pool.release(held);
  pool.drop_cached();
  EXPECT_EQ(pool.match(b), 0);
  EXPECT_EQ(pool.unused_blocks(), 8);
  pool.check();
}

TEST(HostKvTier, KeepsEvictedPrefixBlocksAndHitsThemAfterTheGpuMatch) {
  HostKvTier host(1000, true);
  BlockPool pool(3);
  pool.attach_host(&host, 5, 100);
  const std::vector<BlockHash> prompt = chain(1, 3);
  pool.release(run_prompt(pool, prompt));
  std::vector<BlockId> fresh;
  ASSERT_TRUE(pool.allocate(2, fresh));  // evicts blocks 2 then 1 to the host tier
  EXPECT_EQ(pool.match(prompt), 1);
  EXPECT_EQ(host.kept_blocks(), 2);
  EXPECT_EQ(host.kept_bytes(), 200);
  EXPECT_EQ(host.match(5, prompt, 1, 2), 2);
  EXPECT_EQ(host.match(4, prompt, 1, 2), 0) << "kept per key";
  pool.check();
  host.check();
  // Loading them back copies them (another GPU of the model may want them next) and makes them
  // the most recently used.
  host.keep(5, 999, 100);
  pool.release(fresh);
  fresh.clear();
  std::vector<BlockId> held;
  pool.acquire(prompt, 1, held);
  host.touch(5, prompt, 1, 2);
  ASSERT_TRUE(pool.allocate(2, held));
  held[1] = pool.publish(held[1], prompt[1], held[0]);
  held[2] = pool.publish(held[2], prompt[2], held[1]);
  EXPECT_EQ(pool.match(prompt), 3);
  EXPECT_EQ(host.kept_blocks(), 3);
  EXPECT_TRUE(host.reserve_swap(800)) << "room made from the least recently used: 999 first";
  EXPECT_FALSE(host.contains(5, 999));
  EXPECT_TRUE(host.contains(5, prompt[1]));
  pool.check();
  host.check();
}

TEST(HostKvTier, BlocksKeptUnderAModelsKeyServeEveryPoolOfThatModel) {
  HostKvTier host(1000, true);
  BlockPool gpu0(2);
  BlockPool gpu1(2);
  gpu0.attach_host(&host, 0, 100);
  gpu1.attach_host(&host, 0, 100);
  const std::vector<BlockHash> prompt = chain(1, 2);
  gpu0.release(run_prompt(gpu0, prompt));
  std::vector<BlockId> fresh;
  ASSERT_TRUE(gpu0.allocate(2, fresh));  // both blocks go to the host
  EXPECT_EQ(host.match(0, prompt, 0, 2), 2) << "GPU 1 can load what GPU 0 evicted";
  EXPECT_EQ(host.match(1, prompt, 0, 2), 0) << "another model's key does not see them";
}

TEST(HostKvTier, SwapSpaceEvictsKeptBlocksButNeverOtherSwaps) {
  HostKvTier host(1000, true);
  for (uint64_t i = 0; i < 5; ++i) host.keep(0, 100 + i, 100);
  EXPECT_EQ(host.kept_bytes(), 500);
  EXPECT_TRUE(host.reserve_swap(700));
  EXPECT_EQ(host.swapped_bytes(), 700);
  EXPECT_EQ(host.kept_blocks(), 3) << "the two oldest kept blocks made room";
  EXPECT_FALSE(host.contains(0, 100));
  EXPECT_TRUE(host.contains(0, 104));
  EXPECT_FALSE(host.reserve_swap(400)) << "only kept blocks give way";
  EXPECT_EQ(host.swapped_bytes(), 700);
  host.keep(0, 200, 400);
  EXPECT_FALSE(host.contains(0, 200)) << "larger than what swap space leaves: dropped";
  host.keep(0, 201, 200);
  EXPECT_TRUE(host.contains(0, 201));
  EXPECT_EQ(host.kept_blocks(), 2) << "the two oldest made room; swap space untouched";
  EXPECT_EQ(host.used_bytes(), 1000);
  host.release_swap(700);
  EXPECT_EQ(host.swapped_bytes(), 0);
  host.check();
}

TEST(HostKvTier, WithoutKeepingNothingIsKept) {
  HostKvTier host(1000, false);
  host.keep(0, 1, 100);
  EXPECT_EQ(host.kept_blocks(), 0);
  EXPECT_TRUE(host.reserve_swap(1000));
  EXPECT_FALSE(host.reserve_swap(1));
}

// The pool against a trivially correct model: random prompts from a few families run, finish
// and are evicted; after every step the structure checks out and the pool's hits equal a
// brute-force recount over what is indexed.
TEST(BlockPool, RandomisedWorkloadKeepsEveryInvariant) {
  std::mt19937_64 rng(20240601);
  HostKvTier host(64 * 100, true);
  BlockPool pool(64, 80);
  pool.attach_host(&host, 0, 100);
  std::vector<std::vector<BlockId>> live;
  for (int step = 0; step < 4000; ++step) {
    const int action = static_cast<int>(rng() % 10);
    if (action < 5 || live.empty()) {
      const auto family = static_cast<uint64_t>(rng() % 6);
      const int length = 1 + static_cast<int>(rng() % 10);
      const std::vector<BlockHash> prompt = chain(1 + family, length, static_cast<int>(rng() % 4));
      const int32_t hit = pool.match(prompt);
      const int32_t cost = pool.unreferenced_in_prefix(prompt, hit) + length - hit;
      if (cost > pool.available_blocks()) continue;
      std::vector<BlockId> held;
      pool.acquire(prompt, hit, held);
      ASSERT_TRUE(pool.allocate(length - hit, held));
      for (int i = hit; i < length; ++i) {
        held[i] = pool.publish(held[i], prompt[i], i > 0 ? held[i - 1] : kNoBlock);
      }
      live.push_back(held);
    } else if (action < 9) {
      const size_t victim = rng() % live.size();
      pool.release(live[victim]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(victim));
    } else {
      const auto capacity = static_cast<int64_t>(40 + rng() % 41);
      pool.set_capacity(capacity);
    }
    pool.check();
    host.check();
    int64_t references = 0;
    for (const auto& held : live) references += static_cast<int64_t>(held.size());
    ASSERT_EQ(references, pool.references()) << "step " << step;
  }
}

}  // namespace
}  // namespace gangway
