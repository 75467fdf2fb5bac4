// Tests that every kind of bad trace input is an InputError whose one-line message names the
// file, the line and the column or key, and says what was expected.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/input_error.h"
#include "workload/trace/trace_source.h"
#include "workload/trace/trace_spec.h"

namespace gangway {
namespace {

std::string write_fixture(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + "gangway_trace_errors_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// The message of the InputError that reading the whole trace throws, with the path replaced by
// "FILE"; "no error" if there is none.
std::string error_reading(TraceSpec spec) {
  const std::string path = spec.path;
  try {
    TraceSource source(std::move(spec), 1);
    while (source.next()) {
    }
  } catch (const InputError& error) {
    std::string message = error.what();
    const size_t at = message.find(path);
    if (at != std::string::npos) message.replace(at, path.size(), "FILE");
    return message;
  }
  return "no error";
}

std::string error_in(const std::string& name, TraceFormat format, const std::string& content) {
  TraceSpec spec;
  spec.path = write_fixture(name, content);
  spec.format = format;
  return error_reading(spec);
}

constexpr const char* kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n";
constexpr const char* kAzureRow = "2023-11-16 18:17:03.9799600,4808,10\r\n";

TEST(TraceErrorsTest, AzureMalformedRows) {
  const std::string header_and_row = std::string(kAzureHeader) + kAzureRow;
  EXPECT_EQ(error_in("columns.csv", TraceFormat::azure,
                     header_and_row + "2023-11-16 18:17:04.0000000,3180\r\n"),
            "FILE:3: row: expected 3 comma-separated columns, got 2");
  EXPECT_EQ(error_in("number.csv", TraceFormat::azure,
                     header_and_row + "2023-11-16 18:17:04.0000000,31x0,8\r\n"),
            "FILE:3: ContextTokens: expected a whole number of tokens >= 0, got '31x0'");
  EXPECT_EQ(error_in("negative.csv", TraceFormat::azure,
                     header_and_row + "2023-11-16 18:17:04.0000000,3180,-8\r\n"),
            "FILE:3: GeneratedTokens: expected a whole number of tokens >= 0, got '-8'");
  EXPECT_EQ(error_in("timestamp.csv", TraceFormat::azure,
                     std::string(kAzureHeader) + "2023-13-16 18:17:03.9799600,4808,10\r\n"),
            "FILE:2: TIMESTAMP: expected a time 'YYYY-MM-DD HH:MM:SS.fffffff' from year 1970 to "
            "2200, got '2023-13-16 18:17:03.9799600'");
  // Found by trace_azure_fuzzer: a year whose nanoseconds since 1970 overflow int64 (signed
  // overflow, undefined behaviour) is refused like any other malformed time.
  EXPECT_EQ(
      error_in("year-1011.csv", TraceFormat::azure,
               std::string(kAzureHeader) + "1011-11-16 18:17:03.9799600,4808,10\r\n" + kAzureRow),
      "FILE:2: TIMESTAMP: expected a time 'YYYY-MM-DD HH:MM:SS.fffffff' from year 1970 to "
      "2200, got '1011-11-16 18:17:03.9799600'");
  EXPECT_EQ(error_in("backwards.csv", TraceFormat::azure,
                     header_and_row + "2023-11-16 18:17:03.9799599,3180,8\r\n"),
            "FILE:3: TIMESTAMP: expected a time at or after the previous row's (rows must be in "
            "time order)");
  EXPECT_EQ(error_in("header.csv", TraceFormat::azure,
                     std::string("TIMESTAMP,Context,GeneratedTokens\r\n") + kAzureRow),
            "FILE:1: ContextTokens: expected a header with the columns "
            "TIMESTAMP,ContextTokens,GeneratedTokens (this column is missing)");
  EXPECT_EQ(error_in("quote.csv", TraceFormat::azure, header_and_row + "\"2023-11-16,1,1\r\n"),
            "FILE:3: row: expected a closing quote");
}

TEST(TraceErrorsTest, MooncakeMalformedRows) {
  const std::string good =
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [0]}\n";
  EXPECT_EQ(error_in("missing.jsonl", TraceFormat::mooncake,
                     good + "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1}\n"),
            "FILE:2: hash_ids: expected this key in every row, it is missing");
  EXPECT_EQ(error_in("float.jsonl", TraceFormat::mooncake,
                     good + "{\"timestamp\": 0, \"input_length\": 10.5, \"output_length\": 1, "
                            "\"hash_ids\": [0]}\n"),
            "FILE:2: input_length: expected a whole number of tokens >= 0, got '10.5'");
  EXPECT_EQ(error_in("ids.jsonl", TraceFormat::mooncake,
                     good + "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, "
                            "\"hash_ids\": [0, \"x\"]}\n"),
            "FILE:2: hash_ids: expected whole numbers >= 0, got '\"x\"'");
  EXPECT_EQ(error_in("time.jsonl", TraceFormat::mooncake,
                     good + "{\"timestamp\": \"soon\", \"input_length\": 10, \"output_length\": "
                            "1, \"hash_ids\": [0]}\n"),
            "FILE:2: timestamp: expected milliseconds >= 0, got '\"soon\"'");
  EXPECT_EQ(error_in("array.jsonl", TraceFormat::mooncake, good + "[1, 2]\n"),
            "FILE:2: expected one JSON object per line");
  const std::string bad_json = error_in("json.jsonl", TraceFormat::mooncake, good + "{\"a\": \n");
  EXPECT_EQ(bad_json.rfind("FILE:2: expected one JSON object per line (", 0), 0u) << bad_json;
  // Backwards in time, found while spreading (the reader checks every row).
  EXPECT_EQ(error_in("backwards.jsonl", TraceFormat::mooncake,
                     "{\"timestamp\": 5, \"input_length\": 10, \"output_length\": 1, "
                     "\"hash_ids\": [0]}\n" +
                         good),
            "FILE:2: timestamp: expected a time at or after the previous row's (rows must be in "
            "time order)");
}

TEST(TraceErrorsTest, BurstGptMalformedRows) {
  const std::string header =
      "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n";
  EXPECT_EQ(
      error_in("time.csv", TraceFormat::burstgpt,
               header + "5,ChatGPT,472,18,490,Conversation log\nsoon,ChatGPT,1,1,2,API log\n"),
      "FILE:3: Timestamp: expected seconds >= 0, got 'soon'");
  EXPECT_EQ(error_in("tokens.csv", TraceFormat::burstgpt,
                     header + "5,ChatGPT,472,lots,490,Conversation log\n"),
            "FILE:2: Response tokens: expected a whole number of tokens >= 0, got 'lots'");
  EXPECT_EQ(error_in("only_failures.csv", TraceFormat::burstgpt,
                     header + "5,ChatGPT,472,0,472,Conversation log\n"),
            "FILE: expected at least one request row, the trace has none (1 failed rows skipped)");
}

TEST(TraceErrorsTest, EmptyTraces) {
  EXPECT_EQ(error_in("empty.csv", TraceFormat::azure, ""),
            "FILE: expected a CSV header line and rows, the file is empty");
  EXPECT_EQ(error_in("header_only.csv", TraceFormat::azure, kAzureHeader),
            "FILE: expected at least one request row, the trace has none");
  EXPECT_EQ(error_in("empty.jsonl", TraceFormat::mooncake, "\n\n"),
            "FILE: expected at least one request row, the trace has none");

  TraceSpec spec;
  spec.path = write_fixture("window.csv", std::string(kAzureHeader) + kAzureRow +
                                              "2023-11-16 18:17:13.9799600,4808,10\r\n");
  spec.format = TraceFormat::azure;
  spec.start_s = 20;
  EXPECT_EQ(error_reading(spec),
            "FILE: expected at least one request in the window [20 s, end), the trace's rows run "
            "from 0 s to 10 s");
  spec.start_s = 1;
  spec.end_s = 2;
  EXPECT_EQ(error_reading(spec),
            "FILE: expected at least one request in the window [1 s, 2 s), the trace's rows run "
            "from 0 s to 10 s");

  spec.start_s.reset();
  spec.end_s.reset();
  TraceMappingRule tiny;
  tiny.max_prompt_tokens = 10;
  spec.rules = {tiny};
  EXPECT_EQ(error_reading(spec),
            "FILE: expected at least one row that a mapping rule takes, none of 2 rows is");
}

TEST(TraceErrorsTest, MissingFileAndBadSpecs) {
  TraceSpec spec;
  spec.path = ::testing::TempDir() + "gangway_trace_errors_does_not_exist.csv";
  EXPECT_EQ(error_reading(spec), "FILE: cannot open the trace file: No such file or directory");

  try {
    parse_trace_format("csv", "scenario.yaml:4", "trace.format");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "scenario.yaml:4: trace.format: expected one of azure, mooncake, burstgpt, got "
                 "'csv'");
  }
  EXPECT_EQ(parse_trace_format("burstgpt"), TraceFormat::burstgpt);

  spec.path = write_fixture("spec.csv", std::string(kAzureHeader) + kAzureRow);
  spec.origin = "scenario.yaml:9";
  spec.rate_scale = 0;
  EXPECT_EQ(error_reading(spec),
            "scenario.yaml:9: rate_scale: expected a finite number > 0, got 0");
  spec.rate_scale = 1;
  spec.start_s = 5;
  spec.end_s = 5;
  EXPECT_EQ(error_reading(spec),
            "scenario.yaml:9: end_s: expected a number of seconds > start_s (5), got 5");
  spec.start_s.reset();
  spec.end_s.reset();
  TraceMappingRule rule;
  rule.trace_model = "GPT-4";
  spec.rules = {rule};
  EXPECT_EQ(error_reading(spec),
            "scenario.yaml:9: rules[0].trace_model: expected only for burstgpt traces (they have "
            "a Model column)");
  rule.trace_model.reset();
  rule.share = 1.5;
  spec.rules = {rule};
  EXPECT_EQ(error_reading(spec),
            "scenario.yaml:9: rules[0].share: expected a fraction of rows in (0, 1], got 1.5");
}

}  // namespace
}  // namespace gangway
