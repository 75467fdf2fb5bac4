// Tests for synthetic streams and workloads: block hashes, shared prefix groups, multi-turn
// sessions, merging in time order, the duration cut, and reproducibility (same seed identical,
// different seed different, adding a stream leaves the others alone).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "core/input_error.h"
#include "workload/block_hash.h"
#include "workload/length_spec_for_tests.h"
#include "workload/request_source_for_tests.h"
#include "workload/rng.h"
#include "workload/stream_source.h"
#include "workload/workload.h"

namespace gangway {
namespace {

StreamSpec poisson_stream(const std::string& name, double rate_per_s) {
  StreamSpec spec;
  spec.name = name;
  spec.arrival.kind = ArrivalSpec::Kind::poisson;
  spec.arrival.rate_per_s = rate_per_s;
  spec.prompt_tokens = geometric_length(300);
  spec.output_tokens = geometric_length(100);
  spec.max_tokens = 1000;
  return spec;
}

bool same_request(const WorkloadItem& a, const WorkloadItem& b) {
  return a.spec.arrival == b.spec.arrival && a.spec.model == b.spec.model &&
         a.spec.slo_class == b.spec.slo_class && a.spec.tenant == b.spec.tenant &&
         a.spec.prompt_tokens == b.spec.prompt_tokens && a.spec.max_tokens == b.spec.max_tokens &&
         a.spec.prefix_blocks == b.spec.prefix_blocks && a.output_tokens == b.output_tokens;
}

TEST(BlockHashTest, EqualPrefixesGiveEqualHashesUpToTheFirstDifference) {
  const std::vector<ContentSegment> a = {{1, 40}, {2, 30}};
  const std::vector<ContentSegment> b = {{1, 40}, {3, 30}};
  const std::vector<BlockHash> ha = block_hashes(a, 16);
  const std::vector<BlockHash> hb = block_hashes(b, 16);
  ASSERT_EQ(ha.size(), 4u);  // 70 tokens: 4 full blocks, the partial fifth is not hashed
  ASSERT_EQ(hb.size(), 4u);
  // Blocks 0 and 1 lie inside segment 1; block 2 (tokens 32..47) mixes both segments.
  EXPECT_EQ(ha[0], hb[0]);
  EXPECT_EQ(ha[1], hb[1]);
  EXPECT_NE(ha[2], hb[2]);
  EXPECT_NE(ha[3], hb[3]);
  // The same content split differently at a block boundary is a different prompt structure
  // only if the split moves tokens: a zero-token segment changes nothing.
  const std::vector<ContentSegment> with_empty = {{1, 40}, {9, 0}, {2, 30}};
  EXPECT_EQ(block_hashes(with_empty, 16), ha);
  // The same content at another offset is other tokens.
  EXPECT_NE(block_hashes(std::vector<ContentSegment>{{2, 16}}, 16)[0],
            block_hashes(std::vector<ContentSegment>{{2, 32}}, 16)[1]);
  // Hashes chain: equal block contents at different positions differ.
  const std::vector<BlockHash> repeated =
      block_hashes(std::vector<ContentSegment>{{5, 16}, {5, 16}}, 16);
  EXPECT_NE(repeated[0], repeated[1]);
  EXPECT_EQ(block_hashes(std::vector<ContentSegment>{{1, 15}}, 16).size(), 0u);
  EXPECT_EQ(block_hashes(a, 32).size(), 2u);
}

TEST(StreamSourceTest, PrefixGroupsShareExactlyTheirGroupsBlocks) {
  StreamSpec spec = poisson_stream("chat", 100);
  spec.prompt_tokens = constant_length(40);
  spec.prefix = PrefixSpec{.groups = 5, .group_tokens = 70, .zipf_s = 1.2, .pool = ""};
  StreamSource source(spec, 0, 42);
  const std::vector<WorkloadItem> items = drain(source, 20000);
  ASSERT_EQ(items.size(), 20000u);

  // 110 tokens: 6 full blocks; blocks 0-3 lie in the group prompt, block 4 mixes the group's
  // last 6 tokens with the request's own, block 5 is the request's own.
  std::map<BlockHash, std::vector<BlockHash>> group_blocks;  // by first hash
  std::map<BlockHash, int> group_counts;
  std::set<BlockHash> own_blocks;
  for (const WorkloadItem& item : items) {
    ASSERT_EQ(item.spec.prompt_tokens, 110);
    const std::vector<BlockHash>& blocks = item.spec.prefix_blocks;
    ASSERT_EQ(blocks.size(), 6u);
    const std::vector<BlockHash> shared(blocks.begin(), blocks.begin() + 4);
    const auto [it, inserted] = group_blocks.emplace(blocks[0], shared);
    if (!inserted) {
      EXPECT_EQ(it->second, shared);
    }
    ++group_counts[blocks[0]];
    EXPECT_TRUE(own_blocks.insert(blocks[4]).second);
    EXPECT_TRUE(own_blocks.insert(blocks[5]).second);
  }
  ASSERT_EQ(group_blocks.size(), 5u);
  // The groups are the pool's: group g is the content mix_pair(hash_string(pool), g).
  std::set<BlockHash> group_hashes;
  for (const auto& [first, blocks] : group_blocks) {
    group_hashes.insert(blocks.begin(), blocks.end());
    bool found = false;
    for (uint64_t g = 0; g < 5; ++g) {
      const std::vector<ContentSegment> group = {{mix_pair(hash_string("chat"), g), 64}};
      found = found || block_hashes(group, 16) == blocks;
    }
    EXPECT_TRUE(found);
  }
  EXPECT_EQ(group_hashes.size(), 20u);  // no block shared between groups
  for (const BlockHash h : own_blocks) EXPECT_EQ(group_hashes.count(h), 0u);

  // Popularity is Zipf(1.2): the most common group has probability 1 / H(5, 1.2).
  const ZipfSampler zipf(5, 1.2);
  int most = 0;
  for (const auto& [first, count] : group_counts) most = std::max(most, count);
  const double p = zipf.probability(0);
  EXPECT_NEAR(most / 20000.0, p, 5 * std::sqrt(p * (1 - p) / 20000));
}

TEST(StreamSourceTest, StreamsOfOnePoolShareGroupsOthersDoNot) {
  StreamSpec a = poisson_stream("a", 10);
  a.prefix = PrefixSpec{.groups = 1, .group_tokens = 32, .zipf_s = 1, .pool = "system"};
  StreamSpec b = poisson_stream("b", 10);
  b.prefix = a.prefix;
  StreamSpec c = poisson_stream("c", 10);
  c.prefix = PrefixSpec{.groups = 1, .group_tokens = 32, .zipf_s = 1, .pool = ""};
  StreamSource sa(a, 0, 1);
  StreamSource sb(b, 1, 1);
  StreamSource sc(c, 2, 1);
  const auto first_two = [](StreamSource& s) {
    const std::vector<BlockHash> blocks = s.next()->spec.prefix_blocks;
    return std::vector<BlockHash>(blocks.begin(), blocks.begin() + 2);
  };
  const std::vector<BlockHash> from_a = first_two(sa);
  EXPECT_EQ(from_a, first_two(sb));
  EXPECT_NE(from_a[0], first_two(sc)[0]);
}

// Finds, for each later turn, the earlier turn it extends.
TEST(StreamSourceTest, SessionTurnsExtendTheirEarlierContext) {
  StreamSpec spec = poisson_stream("chat", 20);
  spec.prompt_tokens = constant_length(20);
  spec.output_tokens = constant_length(30);
  spec.sessions = SessionSpec{
      .new_session_probability = 0.25, .think_time_s = 2.0, .max_active_sessions = 100000};
  spec.max_prompt_tokens = 1000000;
  StreamSource source(spec, 0, 7);
  const std::vector<WorkloadItem> items = drain(source, 40000);

  // Turn k has prompt 50k - 30 (each earlier turn adds its 20 prompt and 30 output tokens).
  std::map<std::vector<BlockHash>, const WorkloadItem*> by_blocks;
  std::set<BlockHash> seen;
  int first_turns = 0;
  double think_sum = 0;
  int later_turns = 0;
  for (const WorkloadItem& item : items) {
    const int32_t prompt = item.spec.prompt_tokens;
    ASSERT_EQ((prompt + 30) % 50, 0) << prompt;
    const std::vector<BlockHash>& blocks = item.spec.prefix_blocks;
    if (prompt == 20) {
      ++first_turns;
    } else {
      // The previous turn's full blocks are this turn's first blocks...
      const size_t previous_blocks = static_cast<size_t>((prompt - 50) / 16);
      const std::vector<BlockHash> head(blocks.begin(), blocks.begin() + previous_blocks);
      const auto previous = by_blocks.find(head);
      if (previous_blocks > 0) {
        ASSERT_NE(previous, by_blocks.end()) << "turn with prompt " << prompt;
        EXPECT_EQ(previous->second->spec.prompt_tokens, prompt - 50);
        EXPECT_LE(previous->second->spec.arrival, item.spec.arrival);
        think_sum += to_seconds(item.spec.arrival - previous->second->spec.arrival);
        ++later_turns;
      }
      // ...and everything after them is new content.
      for (size_t i = previous_blocks; i < blocks.size(); ++i) {
        EXPECT_EQ(seen.count(blocks[i]), 0u);
      }
    }
    seen.insert(blocks.begin(), blocks.end());
    by_blocks[blocks] = &item;
  }
  // A fraction new_session_probability of requests open a session (binomial standard error);
  // think times are exponential with mean 2 s (standard error 2 / sqrt(n)).
  const double n = static_cast<double>(items.size());
  EXPECT_NEAR(first_turns / n, 0.25, 5 * std::sqrt(0.25 * 0.75 / n));
  ASSERT_GT(later_turns, 10000);
  EXPECT_NEAR(think_sum / later_turns, 2.0, 5 * 2.0 / std::sqrt(later_turns));
  // All turns together arrive at the configured rate (relative standard error about
  // sqrt(mean turns / sessions)).
  const double rate = n / to_seconds(items.back().spec.arrival);
  EXPECT_NEAR(rate / 20, 1.0, 5 * std::sqrt(4.0 / (n / 4)));
}

TEST(StreamSourceTest, SessionsEndAtMaxPromptAndStayBounded) {
  StreamSpec spec = poisson_stream("chat", 200);
  spec.prompt_tokens = constant_length(20);
  spec.output_tokens = constant_length(30);
  spec.sessions =
      SessionSpec{.new_session_probability = 0.05, .think_time_s = 10.0, .max_active_sessions = 50};
  spec.max_prompt_tokens = 300;
  StreamSource source(spec, 0, 8);
  size_t most_active = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::optional<WorkloadItem> item = source.next();
    ASSERT_TRUE(item);
    ASSERT_LE(item->spec.prompt_tokens, 300);
    most_active = std::max(most_active, source.active_sessions());
  }
  EXPECT_LE(most_active, 50u);
  EXPECT_EQ(most_active, 50u);
  EXPECT_GT(source.counters().sessions_ended_at_max_prompt, 0);
  EXPECT_GT(source.counters().sessions_not_tracked, 0);
  EXPECT_EQ(source.counters().requests, 20000);
}

TEST(StreamSourceTest, FirstTurnsAreCutToMaxPrompt) {
  StreamSpec spec = poisson_stream("long", 10);
  spec.prompt_tokens = constant_length(5000);
  spec.prefix = PrefixSpec{.groups = 2, .group_tokens = 1000, .zipf_s = 1, .pool = ""};
  spec.max_prompt_tokens = 4096;
  StreamSource source(spec, 0, 9);
  const WorkloadItem item = *source.next();
  EXPECT_EQ(item.spec.prompt_tokens, 4096);
  EXPECT_EQ(item.spec.prefix_blocks.size(), 256u);
  EXPECT_EQ(source.counters().prompts_truncated, 1);
}

TEST(StreamSourceTest, OutputIsCappedByMaxTokens) {
  StreamSpec spec = poisson_stream("capped", 100);
  spec.output_tokens = geometric_length(200);
  spec.max_tokens = 150;
  StreamSource source(spec, 0, 10);
  int at_cap = 0;
  for (const WorkloadItem& item : drain(source, 5000)) {
    ASSERT_EQ(item.spec.max_tokens, 150);
    ASSERT_LE(item.output_tokens, 150);
    ASSERT_GE(item.output_tokens, 1);
    at_cap += item.output_tokens == 150;
  }
  // P(geometric(mean 200) >= 150) = (1 - 1/200)^149 = 0.474.
  EXPECT_NEAR(at_cap / 5000.0, 0.474, 5 * std::sqrt(0.474 * 0.526 / 5000));
}

TEST(WorkloadTest, MergesInTimeOrderWithIdsAndStopsAtTheDuration) {
  std::vector<StreamSpec> streams = {poisson_stream("sm", 300), poisson_stream("lm", 30)};
  streams[1].model = ModelId(1);
  streams[1].slo_class = SloClassId(2);
  streams[1].tenant = TenantId(3);
  Workload workload(streams,
                    {.seed = 5, .duration = std::chrono::seconds(100), .kv_block_tokens = 16});
  EXPECT_EQ(workload.stream_count(), 2u);
  EXPECT_EQ(workload.stream_name(1), "lm");
  const std::vector<WorkloadItem> items = drain(workload);
  ASSERT_GT(items.size(), 30000u);
  int lm = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const WorkloadItem& item = items[i];
    EXPECT_EQ(item.spec.id, RequestId(i));
    if (i > 0) {
      EXPECT_GE(item.spec.arrival, items[i - 1].spec.arrival);
    }
    EXPECT_LT(item.spec.arrival, Time::zero() + std::chrono::seconds(100));
    EXPECT_EQ(item.spec.prefix_blocks.size(), static_cast<size_t>(item.spec.prompt_tokens / 16));
    if (item.stream == 1) {
      ++lm;
      EXPECT_EQ(item.spec.model, ModelId(1));
      EXPECT_EQ(item.spec.slo_class, SloClassId(2));
      EXPECT_EQ(item.spec.tenant, TenantId(3));
    }
  }
  EXPECT_NEAR(lm, 3000, 5 * std::sqrt(3000));
  EXPECT_NEAR(static_cast<double>(items.size()) - lm, 30000, 5 * std::sqrt(30000));
  // Lazy: nothing is generated past the end (only each stream's next arrival time is known).
  EXPECT_EQ(workload.stream(0).counters().requests + workload.stream(1).counters().requests,
            static_cast<int64_t>(items.size()));
}

TEST(WorkloadTest, TiesGoToTheFirstStream) {
  std::vector<StreamSpec> streams = {poisson_stream("a", 1), poisson_stream("b", 1)};
  for (StreamSpec& s : streams) {
    s.arrival.kind = ArrivalSpec::Kind::gamma;
    s.arrival.cv = 0;
    s.arrival.rate_per_s = 4;
  }
  Workload workload(streams, {.seed = 1, .duration = std::chrono::seconds(10)});
  const std::vector<WorkloadItem> items = drain(workload);
  ASSERT_EQ(items.size(), 78u);  // 0.25, 0.5, ..., 9.75 s from each stream
  for (size_t i = 0; i < items.size(); ++i) EXPECT_EQ(items[i].stream, i % 2);
}

TEST(WorkloadTest, SameSeedIdenticalDifferentSeedDifferent) {
  std::vector<StreamSpec> streams = {poisson_stream("a", 50), poisson_stream("b", 20)};
  streams[1].sessions =
      SessionSpec{.new_session_probability = 0.3, .think_time_s = 1, .max_active_sessions = 100};
  streams[1].prefix = PrefixSpec{.groups = 10, .group_tokens = 100, .zipf_s = 1, .pool = ""};
  const WorkloadOptions options{.seed = 77, .duration = std::chrono::seconds(200)};
  Workload first(streams, options);
  Workload second(streams, options);
  const std::vector<WorkloadItem> a = drain(first);
  const std::vector<WorkloadItem> b = drain(second);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(same_request(a[i], b[i])) << i;
    ASSERT_EQ(a[i].stream, b[i].stream);
  }
  Workload other_seed(streams, {.seed = 78, .duration = std::chrono::seconds(200)});
  const std::vector<WorkloadItem> c = drain(other_seed);
  int same = 0;
  for (size_t i = 0; i < std::min(a.size(), c.size()); ++i) same += same_request(a[i], c[i]);
  EXPECT_EQ(same, 0);
}

TEST(WorkloadTest, AddingAStreamLeavesTheOthersUnchanged) {
  std::vector<StreamSpec> two = {poisson_stream("a", 50), poisson_stream("b", 20)};
  std::vector<StreamSpec> three = two;
  three.push_back(poisson_stream("c", 80));
  const WorkloadOptions options{.seed = 3, .duration = std::chrono::seconds(100)};
  Workload small(two, options);
  Workload large(three, options);
  std::vector<WorkloadItem> without_c;
  for (WorkloadItem& item : drain(large)) {
    if (item.stream != 2) without_c.push_back(std::move(item));
  }
  const std::vector<WorkloadItem> reference = drain(small);
  ASSERT_EQ(reference.size(), without_c.size());
  for (size_t i = 0; i < reference.size(); ++i) {
    ASSERT_TRUE(same_request(reference[i], without_c[i])) << i;
  }
}

TEST(WorkloadTest, LengthsDoNotMoveArrivalTimes) {
  std::vector<StreamSpec> streams = {poisson_stream("a", 50)};
  Workload before(streams, {.seed = 4, .duration = std::chrono::seconds(50)});
  streams[0].output_tokens = constant_length(3);
  streams[0].prompt_tokens = geometric_length(20);
  Workload after(streams, {.seed = 4, .duration = std::chrono::seconds(50)});
  const std::vector<WorkloadItem> a = drain(before);
  const std::vector<WorkloadItem> b = drain(after);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i].spec.arrival, b[i].spec.arrival);
}

TEST(WorkloadTest, PinnedFirstRequests) {
  // Arrival ns, prompt and output of seed 2024's first requests: any change of the generators'
  // algorithms or random stream layout shows here (and a platform difference would too).
  // Matched by an independent Python implementation.
  Workload workload({poisson_stream("a", 100)}, {.seed = 2024});
  std::vector<int64_t> values;
  for (int i = 0; i < 3; ++i) {
    const WorkloadItem item = *workload.next();
    values.push_back(item.spec.arrival.ns());
    values.push_back(item.spec.prompt_tokens);
    values.push_back(item.output_tokens);
  }
  EXPECT_EQ(values,
            (std::vector<int64_t>{3143143, 145, 131, 8250263, 364, 63, 21588859, 221, 378}));
}

TEST(WorkloadTest, InvalidStreamIsAnInputErrorNamingTheStream) {
  StreamSpec spec = poisson_stream("chat", 10);
  spec.origin = "scenario.yaml:12";
  spec.prompt_tokens.mean = 0.5;
  try {
    Workload workload({spec}, {});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "scenario.yaml:12: chat.prompt_tokens.mean: expected a number >= 1, got 0.5");
  }
  spec = poisson_stream("chat", 10);
  spec.sessions =
      SessionSpec{.new_session_probability = 0, .think_time_s = 1, .max_active_sessions = 1};
  EXPECT_THROW(Workload({spec}, {}), InputError);
}

}  // namespace
}  // namespace gangway
