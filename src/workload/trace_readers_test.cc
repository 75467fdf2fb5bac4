// Tests for trace replay: the three readers on small fixtures written here and on the real files
// in data/traces (row counts and first rows as data/traces/README.md states them), rate scaling,
// windows, timestamp spreading, Mooncake block conversion, max_tokens policies and mapping rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "workload/block_hash.h"
#include "workload/request_source_for_tests.h"
#include "workload/rng.h"
#include "workload/trace/trace_source.h"
#include "workload/trace/trace_text.h"

namespace gangway {
namespace {

std::string write_fixture(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + "gangway_trace_readers_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string real_trace(const std::string& file) {
  return std::string(GANGWAY_SOURCE_DIR) + "/data/traces/" + file;
}

TraceSpec spec_for(const std::string& path, TraceFormat format) {
  TraceSpec spec;
  spec.path = path;
  spec.format = format;
  return spec;
}

std::vector<int64_t> arrivals_ms(const std::vector<WorkloadItem>& items) {
  std::vector<int64_t> ms;
  for (const WorkloadItem& item : items) ms.push_back(item.spec.arrival.ns() / 1'000'000);
  return ms;
}

constexpr const char* kAzureFixture =
    "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
    "2023-11-16 23:59:59.5000000,100,10\r\n"
    "2023-11-17 00:00:00.2500000,40,5\r\n"
    "2023-11-17 00:00:01.5000001,17,1\r\n"
    "2023-11-17 00:00:03.5000000,3000,700";  // no newline after the last row

TEST(TraceTextTest, ParsesFieldsExactly) {
  EXPECT_EQ(parse_datetime_ns("1970-01-01 00:00:01.5"), 1'500'000'000);
  EXPECT_EQ(parse_datetime_ns("2000-03-01 00:00:00").value() -
                parse_datetime_ns("2000-02-28 00:00:00").value(),
            2 * 86400'000'000'000LL);
  EXPECT_EQ(parse_datetime_ns("2023-11-16 18:17:03.9799600").value() % 1'000'000'000, 979'960'000);
  EXPECT_FALSE(parse_datetime_ns("2023-02-29 00:00:00"));
  EXPECT_FALSE(parse_datetime_ns("2023-11-16 24:00:00"));
  EXPECT_FALSE(parse_datetime_ns("2023-11-16"));
  EXPECT_FALSE(parse_datetime_ns("2023-11-16 18:17:03."));
  // Years whose nanoseconds, or the difference of two of them, would overflow int64.
  EXPECT_FALSE(parse_datetime_ns("1969-12-31 23:59:59"));
  EXPECT_FALSE(parse_datetime_ns("2201-01-01 00:00:00"));
  EXPECT_FALSE(parse_datetime_ns("9999-12-31 23:59:59"));
  EXPECT_EQ(parse_datetime_ns("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(parse_datetime_ns("2200-12-31 23:59:59.999999999"), 7'289'654'399'999'999'999);
  EXPECT_EQ(parse_decimal_seconds_ns("12.25"), 12'250'000'000);
  EXPECT_EQ(parse_decimal_seconds_ns(" 7 "), 7'000'000'000);
  EXPECT_FALSE(parse_decimal_seconds_ns("-1"));
  EXPECT_FALSE(parse_decimal_seconds_ns("1e3"));
  EXPECT_EQ(parse_token_count("4808"), 4808);
  EXPECT_FALSE(parse_token_count("12.5"));
  EXPECT_FALSE(parse_token_count("-3"));
  EXPECT_FALSE(parse_token_count("99999999999"));
  std::vector<std::string> fields;
  ASSERT_TRUE(split_csv_line("a,\"b,c\",\"say \"\"hi\"\"\",", fields));
  EXPECT_EQ(fields, (std::vector<std::string>{"a", "b,c", "say \"hi\"", ""}));
  EXPECT_FALSE(split_csv_line("a,\"b", fields));
}

TEST(AzureTraceTest, ReadsFixtureWithCrlfAndNoFinalNewline) {
  TraceSource source(spec_for(write_fixture("azure.csv", kAzureFixture), TraceFormat::azure), 1);
  EXPECT_EQ(source.stream_count(), 1u);
  EXPECT_EQ(source.stream_name(0), "gangway_trace_readers_azure");
  const std::vector<WorkloadItem> items = drain(source);
  ASSERT_EQ(items.size(), 4u);
  // Times from the first row, across midnight, exact to 100 ns.
  EXPECT_EQ(items[0].spec.arrival.ns(), 0);
  EXPECT_EQ(items[1].spec.arrival.ns(), 750'000'000);
  EXPECT_EQ(items[2].spec.arrival.ns(), 2'000'000'100);
  EXPECT_EQ(items[3].spec.arrival.ns(), 4'000'000'000);
  EXPECT_EQ(items[0].spec.prompt_tokens, 100);
  EXPECT_EQ(items[0].output_tokens, 10);
  EXPECT_EQ(items[3].spec.prompt_tokens, 3000);
  EXPECT_EQ(items[3].output_tokens, 700);
  std::set<BlockHash> blocks;
  for (size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(items[i].spec.id, RequestId(i));
    EXPECT_EQ(items[i].stream, 0);
    // No prefix information: every full block is the row's own.
    EXPECT_EQ(items[i].spec.prefix_blocks.size(),
              static_cast<size_t>(items[i].spec.prompt_tokens / 16));
    for (const BlockHash h : items[i].spec.prefix_blocks) EXPECT_TRUE(blocks.insert(h).second);
    // Default policy with cap 0: max_tokens = the true output.
    EXPECT_EQ(items[i].spec.max_tokens, items[i].output_tokens);
  }
}

TEST(AzureTraceTest, RateScaleAndWindow) {
  const std::string path = write_fixture("azure_window.csv", kAzureFixture);
  TraceSpec spec = spec_for(path, TraceFormat::azure);
  spec.rate_scale = 2.0;
  TraceSource faster(spec, 1);
  EXPECT_EQ(arrivals_ms(drain(faster)), (std::vector<int64_t>{0, 375, 1000, 2000}));

  // Window [0.5 s, 3 s): rows at 0.75 and 2.0000001 s, re-based to 0.5 s.
  spec.rate_scale = 1.0;
  spec.start_s = 0.5;
  spec.end_s = 3.0;
  TraceSource window(spec, 1);
  const std::vector<WorkloadItem> items = drain(window);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].spec.arrival.ns(), 250'000'000);
  EXPECT_EQ(items[1].spec.arrival.ns(), 1'500'000'100);
  EXPECT_EQ(items[0].spec.id, RequestId(0));
  EXPECT_EQ(window.counters().before_window, 1);
  EXPECT_EQ(window.counters().requests, 2);
}

TEST(AzureTraceTest, MaxTokensPolicies) {
  const std::string path = write_fixture("azure_max.csv", kAzureFixture);
  TraceSpec spec = spec_for(path, TraceFormat::azure);
  spec.max_tokens = {TraceMaxTokens::Kind::at_least_output, 256};
  TraceSource at_least(spec, 1);
  std::vector<int32_t> max_tokens;
  std::vector<int32_t> outputs;
  for (const WorkloadItem& item : drain(at_least)) {
    max_tokens.push_back(item.spec.max_tokens);
    outputs.push_back(item.output_tokens);
  }
  EXPECT_EQ(max_tokens, (std::vector<int32_t>{256, 256, 256, 700}));
  EXPECT_EQ(outputs, (std::vector<int32_t>{10, 5, 1, 700}));

  spec.max_tokens = {TraceMaxTokens::Kind::fixed, 256};
  TraceSource fixed(spec, 1);
  max_tokens.clear();
  outputs.clear();
  for (const WorkloadItem& item : drain(fixed)) {
    max_tokens.push_back(item.spec.max_tokens);
    outputs.push_back(item.output_tokens);
  }
  EXPECT_EQ(max_tokens, (std::vector<int32_t>{256, 256, 256, 256}));
  EXPECT_EQ(outputs, (std::vector<int32_t>{10, 5, 1, 256}));
}

TEST(AzureTraceTest, LengthsForAnEmpiricalSpec) {
  TraceSpec spec = spec_for(write_fixture("azure_lengths.csv", kAzureFixture), TraceFormat::azure);
  spec.end_s = 3;
  const TraceLengths lengths = read_trace_lengths(spec);
  EXPECT_EQ(lengths.prompt_tokens, (std::vector<int32_t>{100, 40, 17}));
  EXPECT_EQ(lengths.output_tokens, (std::vector<int32_t>{10, 5, 1}));
}

TEST(AzureTraceTest, RealFiles) {
  struct Expected {
    const char* file;
    size_t rows;
    int32_t first_prompt, first_output, second_prompt, second_output;
    int64_t second_ns;
    double span_s;
  };
  for (const Expected& e :
       {Expected{"AzureLLMInferenceTrace_code.csv", 8819, 4808, 10, 3180, 8, 52'000'000, 3435.9},
        Expected{"AzureLLMInferenceTrace_conv.csv", 19366, 374, 44, 396, 109, 4'314'579'000,
                 3501.7}}) {
    TraceSource source(spec_for(real_trace(e.file), TraceFormat::azure), 1);
    const std::vector<WorkloadItem> items = drain(source);
    ASSERT_EQ(items.size(), e.rows) << e.file;
    EXPECT_EQ(items[0].spec.arrival.ns(), 0);
    EXPECT_EQ(items[0].spec.prompt_tokens, e.first_prompt);
    EXPECT_EQ(items[0].output_tokens, e.first_output);
    EXPECT_EQ(items[1].spec.prompt_tokens, e.second_prompt);
    EXPECT_EQ(items[1].output_tokens, e.second_output);
    EXPECT_EQ(items[1].spec.arrival.ns(), e.second_ns);
    EXPECT_NEAR(to_seconds(items.back().spec.arrival), e.span_s, 0.05);
    EXPECT_EQ(source.counters().rows_read, static_cast<int64_t>(e.rows));
  }
}

TEST(MooncakeTraceTest, CutsTraceBlocksIntoOurBlocks) {
  const std::string path = write_fixture(
      "mooncake.jsonl",
      "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 5, \"hash_ids\": [1, 2]}\n"
      "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 6, \"hash_ids\": [1, 3]}\n"
      "{\"timestamp\": 3000, \"input_length\": 1000, \"output_length\": 0, \"hash_ids\": [1, "
      "2]}\n"
      "{\"hash_ids\": [4], \"output_length\": 7, \"input_length\": 20, \"timestamp\": 6000}\n");
  TraceSource source(spec_for(path, TraceFormat::mooncake), 1);
  const std::vector<WorkloadItem> items = drain(source);
  ASSERT_EQ(items.size(), 4u);
  const auto& a = items[0].spec.prefix_blocks;
  const auto& b = items[1].spec.prefix_blocks;
  const auto& c = items[2].spec.prefix_blocks;
  ASSERT_EQ(a.size(), 64u);  // 1024 / 16
  ASSERT_EQ(b.size(), 62u);  // 1000 / 16, the partial last block not hashed
  ASSERT_EQ(c.size(), 62u);
  // Trace block 1 is 32 of our blocks, shared by all three; then they differ...
  for (size_t i = 0; i < 32; ++i) EXPECT_EQ(a[i], b[i]) << i;
  for (size_t i = 32; i < 62; ++i) EXPECT_NE(a[i], b[i]) << i;
  // ...except that c holds the same trace blocks as a: equal for all its full blocks.
  EXPECT_TRUE(std::equal(c.begin(), c.end(), a.begin()));
  // Trace block 1's first sub-block is content mix(h, 0) chained from the root, as for a
  // synthetic prompt whose first segment is that content.
  const std::vector<ContentSegment> one = {{mix_pair(hash_string(path), 1), 512}};
  EXPECT_EQ(std::vector<BlockHash>(a.begin(), a.begin() + 32), block_hashes(one, 16));
  // Output 0 is replayed as 1; 20 tokens make one full block.
  EXPECT_EQ(items[2].output_tokens, 1);
  EXPECT_EQ(items[3].spec.prefix_blocks.size(), 1u);
  // At another node block size, the same sharing.
  TraceSource coarse(spec_for(path, TraceFormat::mooncake), 1, 64);
  const std::vector<WorkloadItem> coarse_items = drain(coarse);
  EXPECT_EQ(coarse_items[0].spec.prefix_blocks.size(), 16u);
  EXPECT_EQ(coarse_items[0].spec.prefix_blocks[7], coarse_items[1].spec.prefix_blocks[7]);
  EXPECT_NE(coarse_items[0].spec.prefix_blocks[8], coarse_items[1].spec.prefix_blocks[8]);
}

TEST(MooncakeTraceTest, SpreadsRowsSharingATimestamp) {
  const std::string path = write_fixture(
      "mooncake_spread.jsonl",
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [0]}\n"
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [0]}\n"
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [0]}\n"
      "{\"timestamp\": 3000, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [0]}\n"
      "\n"
      "{\"timestamp\": 3000, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [0]}\n"
      "{\"timestamp\": 6000, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [0]}\n"
      "{\"timestamp\": 6000, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [0]}\n");
  TraceSpec spec = spec_for(path, TraceFormat::mooncake);
  TraceSource spread(spec, 1);
  // Groups spread over the gap to the next timestamp; the last group over the previous gap.
  EXPECT_EQ(arrivals_ms(drain(spread)),
            (std::vector<int64_t>{0, 1000, 2000, 3000, 4500, 6000, 7500}));
  spec.spread_equal_timestamps = false;
  TraceSource as_recorded(spec, 1);
  EXPECT_EQ(arrivals_ms(drain(as_recorded)),
            (std::vector<int64_t>{0, 0, 0, 3000, 3000, 6000, 6000}));
  // Windows apply to spread times: [1.5 s, 4.5 s) keeps 2000, 3000 (re-based: 500, 1500).
  spec.spread_equal_timestamps = std::nullopt;
  spec.start_s = 1.5;
  spec.end_s = 4.5;
  TraceSource window(spec, 1);
  EXPECT_EQ(arrivals_ms(drain(window)), (std::vector<int64_t>{500, 1500}));
}

TEST(MooncakeTraceTest, RealFile) {
  TraceSource source(
      spec_for(real_trace("mooncake_conversation_trace.jsonl"), TraceFormat::mooncake), 1);
  // Streamed rather than kept: the file expands to 9 million block hashes.
  std::vector<WorkloadItem> head;
  std::vector<BlockHash> all_blocks;
  size_t rows = 0;
  double prompt_blocks = 0;
  Time last_arrival;
  BlockHash first_row_block_31 = 0;
  while (std::optional<WorkloadItem> item = source.next()) {
    ++rows;
    const std::vector<BlockHash>& blocks = item->spec.prefix_blocks;
    // Every row starts with trace block 0: our first 32 blocks are the same in every row.
    if (rows == 1) first_row_block_31 = blocks[31];
    if (blocks.size() >= 32) {
      ASSERT_EQ(blocks[31], first_row_block_31);
    }
    all_blocks.insert(all_blocks.end(), blocks.begin(), blocks.end());
    prompt_blocks += item->spec.prompt_tokens / 16.0;
    last_arrival = item->spec.arrival;
    if (head.size() < 11) head.push_back(std::move(*item));
  }
  ASSERT_EQ(rows, 12031u);
  EXPECT_EQ(head[0].spec.prompt_tokens, 6758);
  EXPECT_EQ(head[0].output_tokens, 500);
  EXPECT_EQ(head[0].spec.prefix_blocks.size(), 6758u / 16);
  EXPECT_EQ(head[1].spec.prompt_tokens, 7322);
  EXPECT_EQ(head[1].output_tokens, 490);
  // Block 33 of rows 0 and 1 lies in trace blocks 1 and 14: different.
  EXPECT_NE(head[0].spec.prefix_blocks[32], head[1].spec.prefix_blocks[32]);
  // The first 10 rows share timestamp 0; the next is at 3 s: spread 300 ms apart.
  EXPECT_EQ(head[1].spec.arrival.ns(), 300'000'000);
  EXPECT_EQ(head[10].spec.arrival.ns(), 3'000'000'000);
  // Last group: 7 rows at 3,536,999 ms spread over the previous gap (2,999 ms).
  EXPECT_EQ(last_arrival.ns(), 3'536'999'000'000 + 2'999'000'000LL * 6 / 7);
  // Prefix reuse at our block size. A request's own hashes are all different (they chain), so
  // the blocks seen in an earlier request are all blocks minus distinct blocks. The README gives
  // 37.4 % of input tokens covered by a previously seen 512-token prefix; at 16-token blocks
  // (only full blocks hashed) the figure must be close to it.
  const double total_blocks = static_cast<double>(all_blocks.size());
  std::sort(all_blocks.begin(), all_blocks.end());
  const double distinct =
      static_cast<double>(std::unique(all_blocks.begin(), all_blocks.end()) - all_blocks.begin());
  EXPECT_NEAR((total_blocks - distinct) / prompt_blocks, 0.374, 0.01);
}

constexpr const char* kBurstGptFixture =
    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
    "5,ChatGPT,472,18,490,Conversation log\n"
    "45,ChatGPT,1087,0,1087,Conversation log\n"
    "45.5,GPT-4,417,276,693,API log\n"
    "118,ChatGPT,1360,107,1467,Conversation log\n"
    "118,GPT-4,0,12,12,API log\n";

TEST(BurstGptTraceTest, SkipsFailuresAndMapsByModel) {
  TraceSpec spec = spec_for(write_fixture("burstgpt.csv", kBurstGptFixture), TraceFormat::burstgpt);
  TraceMappingRule chat;
  chat.name = "chatgpt";
  chat.model = ModelId(0);
  chat.trace_model = "ChatGPT";
  TraceMappingRule gpt4;
  gpt4.name = "gpt4";
  gpt4.model = ModelId(1);
  gpt4.slo_class = SloClassId(2);
  gpt4.trace_model = "GPT-4";
  spec.rules = {chat, gpt4};
  TraceSource source(spec, 1);
  EXPECT_EQ(source.stream_count(), 2u);
  EXPECT_EQ(source.stream_name(1), "gpt4");
  const std::vector<WorkloadItem> items = drain(source);
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(source.counters().failed_rows, 1);
  EXPECT_EQ(source.counters().rows_read, 5);
  // Seconds from the first row (5 s).
  EXPECT_EQ(arrivals_ms(items), (std::vector<int64_t>{0, 40500, 113000, 113000}));
  EXPECT_EQ(items[0].stream, 0);
  EXPECT_EQ(items[1].stream, 1);
  EXPECT_EQ(items[1].spec.model, ModelId(1));
  EXPECT_EQ(items[1].spec.slo_class, SloClassId(2));
  EXPECT_EQ(items[1].spec.prompt_tokens, 417);
  EXPECT_EQ(items[1].output_tokens, 276);
  EXPECT_EQ(items[3].spec.prompt_tokens, 1);  // a 0-token prompt is replayed as 1
  // Spreading is available for any format: the two rows at 118 s spread over the previous gap.
  spec.spread_equal_timestamps = true;
  TraceSource spread(spec, 1);
  EXPECT_EQ(arrivals_ms(drain(spread)), (std::vector<int64_t>{0, 40500, 113000, 149250}));
}

// A synthetic CSV of n rows, one per 10 ms, prompt = 1 + row % 1000.
std::string many_rows(int n) {
  std::string text = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (int i = 0; i < n; ++i) {
    const int centiseconds = i % 100;
    const int seconds = i / 100;
    char line[80];
    std::snprintf(line, sizeof line, "2024-01-01 %02d:%02d:%02d.%02d,%d,%d\n", seconds / 3600,
                  seconds / 60 % 60, seconds % 60, centiseconds, 1 + i % 1000, 1 + i % 7);
    text += line;
  }
  return text;
}

TEST(TraceMappingTest, SharesFiltersAndDeterminism) {
  const std::string path = write_fixture("many.csv", many_rows(20000));
  TraceSpec spec = spec_for(path, TraceFormat::azure);
  TraceMappingRule short_prompts;  // prompts up to 100 tokens all go to model 2
  short_prompts.model = ModelId(2);
  short_prompts.max_prompt_tokens = 100;
  TraceMappingRule sm;
  sm.model = ModelId(0);
  sm.share = 0.7;
  TraceMappingRule lm;
  lm.model = ModelId(1);
  lm.share = 0.3;
  spec.rules = {short_prompts, sm, lm};
  TraceSource source(spec, 11);
  const std::vector<WorkloadItem> items = drain(source);
  ASSERT_EQ(items.size(), 20000u);
  int counts[3] = {0, 0, 0};
  for (const WorkloadItem& item : items) {
    ++counts[item.stream];
    EXPECT_EQ(item.spec.model, ModelId(item.stream == 0 ? 2 : item.stream == 1 ? 0 : 1));
    EXPECT_EQ(item.stream == 0, item.spec.prompt_tokens <= 100);
  }
  EXPECT_EQ(counts[0], 2000);  // exactly the rows with prompt <= 100
  // 18,000 rows split 70/30: binomial standard error sqrt(n p (1-p)) = 61.
  EXPECT_NEAR(counts[1], 12600, 5 * std::sqrt(18000 * 0.21));
  EXPECT_EQ(source.stream_name(1), "gangway_trace_readers_many/1");

  // The same seed maps every row the same; another seed differently.
  TraceSource again(spec, 11);
  TraceSource other(spec, 12);
  const std::vector<WorkloadItem> same = drain(again);
  const std::vector<WorkloadItem> different = drain(other);
  int moved = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    ASSERT_EQ(same[i].stream, items[i].stream);
    moved += different[i].stream != items[i].stream;
  }
  EXPECT_GT(moved, 3000);
  // A window keeps each row's rule (the hash is of the row's index in the file).
  spec.start_s = 100;
  TraceSource window(spec, 11);
  const std::vector<WorkloadItem> tail = drain(window);
  ASSERT_EQ(tail.size(), 10000u);
  for (size_t i = 0; i < tail.size(); ++i) ASSERT_EQ(tail[i].stream, items[10000 + i].stream);

  // Shares summing below 1: the rest of the rows are skipped and counted.
  spec.start_s.reset();
  sm.share = 0.5;
  spec.rules = {sm};
  TraceSource half(spec, 11);
  const double kept = static_cast<double>(drain(half).size());
  EXPECT_NEAR(kept, 10000, 5 * std::sqrt(20000 * 0.25));
  EXPECT_EQ(half.counters().unmapped_rows + static_cast<int64_t>(kept), 20000);
}

TEST(TraceMappingTest, MergesWithSyntheticSources) {
  std::vector<std::unique_ptr<RequestSource>> sources;
  sources.push_back(std::make_unique<TraceSource>(
      spec_for(write_fixture("merge.csv", kAzureFixture), TraceFormat::azure), 1));
  sources.push_back(std::make_unique<TraceSource>(
      spec_for(write_fixture("merge2.csv", kBurstGptFixture), TraceFormat::burstgpt), 1));
  MergedSource merged(std::move(sources), Time::zero() + std::chrono::seconds(3));
  EXPECT_EQ(merged.stream_count(), 2u);
  EXPECT_EQ(merged.stream_name(1), "gangway_trace_readers_merge2");
  const std::vector<WorkloadItem> items = drain(merged);
  // Azure rows at 0, 0.75, 2.0000001 s; BurstGPT's first at 0 (ties: first source first).
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[0].stream, 0);
  EXPECT_EQ(items[1].stream, 1);
  EXPECT_EQ(items[1].spec.prompt_tokens, 472);
  for (size_t i = 0; i < items.size(); ++i) EXPECT_EQ(items[i].spec.id, RequestId(i));
}

}  // namespace
}  // namespace gangway
