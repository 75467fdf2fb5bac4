// What `gangway simulate` tells a person beyond the JSON contract: --seeds summarises each figure
// over seeds, --report writes one self-contained HTML page of plots, tables fit 100 columns with
// "-" for missing data, timelines can be cut to a window and carry counter tracks, and a trace
// that sends a model nothing says so on stderr.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "cli/simulate_command.h"
#include "cli/simulate_command_testing.h"

namespace gangway {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kPeakScenario = std::string(GANGWAY_SOURCE_DIR) + "/examples/peak-mixed.yaml";

SimulateOptions brief_peak() {
  SimulateOptions options;
  options.scenario_path = kPeakScenario;
  options.settings = {"warmup_s=1"};
  options.duration_s = 4;  // a 1 s warm-up, then 3 s measured
  options.drain_s = 5;
  options.jobs = 2;
  return options;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::filesystem::path scratch_file(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("gangway-" +
          std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
          name);
}

TEST(SimulateReporting, SeedsSummariseEachFigureWithAnInterval) {
  SimulateOptions options = brief_peak();
  options.policies = {"gangway", "time-slice"};
  options.seeds = "3..5";
  options.json = true;
  const CommandRun run = simulate(options);
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json document = nlohmann::json::parse(run.out);
  EXPECT_EQ(document["seeds"], nlohmann::json::array({3, 4, 5}));
  ASSERT_EQ(document["runs"].size(), 6u);
  EXPECT_EQ(document["runs"][0]["seed"], 3);
  EXPECT_EQ(document["runs"][5]["seed"], 5);
  ASSERT_EQ(document["summary"].size(), 2u);
  const nlohmann::json& goodput = document["summary"][0]["figures"]["total.goodput_rps"];
  EXPECT_EQ(goodput["samples"], 3);
  double sum = 0;
  for (int i = 0; i < 6; i += 2) sum += document["runs"][i]["total"]["goodput_rps"].get<double>();
  EXPECT_NEAR(goodput["mean"].get<double>(), sum / 3, 1e-9);
  EXPECT_LE(goodput["ci95"][0].get<double>(), goodput["mean"].get<double>());
  EXPECT_GE(goodput["ci95"][1].get<double>(), goodput["mean"].get<double>());

  options.json = false;
  const CommandRun table = simulate(options);
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("seeds 3..5 (3)"));
  EXPECT_THAT(table.out, HasSubstr("±"));
}

TEST(SimulateReporting, TablesFitOneHundredColumnsAndShowDashesForNoData) {
  SimulateOptions options = brief_peak();
  // sm-first starves the large model: none of its requests completes in a short run.
  options.policies = {"gangway", "sm-first", "gangway-exclusive"};
  options.routings = {"predicted-ttft", "round-robin"};
  const CommandRun run = simulate(options);
  ASSERT_EQ(run.status, 0) << run.err;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    // Columns as a terminal shows them ("±" is one).
    EXPECT_LE(std::regex_replace(line, std::regex("±"), "+").size(), 100u) << line;
  }
  EXPECT_THAT(run.out, HasSubstr("measured 3 s after a 1 s warm-up"));
  EXPECT_THAT(run.out, HasSubstr("not completed:"));
  EXPECT_THAT(run.out, Not(HasSubstr("window")));
}

TEST(SimulateReporting, ReportIsOneSelfContainedPageOfPlots) {
  SimulateOptions options = brief_peak();
  options.policies = {"gangway", "fcfs"};
  const std::filesystem::path report = scratch_file("report.html");
  options.report_path = report.string();
  const CommandRun run = simulate(options);
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string html = read_text(report);
  std::filesystem::remove(report);
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(html, HasSubstr("Content-Security-Policy"));
  // Nothing is loaded from anywhere: the only URL is SVG's namespace.
  const std::string without_namespace =
      std::regex_replace(html, std::regex("http://www\\.w3\\.org/2000/svg"), "");
  EXPECT_THAT(without_namespace, Not(HasSubstr("http://")));
  EXPECT_THAT(without_namespace, Not(HasSubstr("https://")));
  EXPECT_THAT(without_namespace, Not(HasSubstr(" src=")));
  int plots = 0;
  for (size_t at = html.find("<svg class=\"plot\""); at != std::string::npos;
       at = html.find("<svg class=\"plot\"", at + 1)) {
    ++plots;
  }
  // 3 comparison bars; per policy 2 CDFs, GPU time, gang phases, queues and KV.
  EXPECT_EQ(plots, 3 + 2 * 6);
  for (const char* title : {"TTFT", "TPOT", "GPUs by activity", "gang phases", "queued requests",
                            "KV blocks in use", "interactive, large model"}) {
    EXPECT_THAT(html, HasSubstr(title));
  }
}

TEST(SimulateReporting, TimelineWindowKeepsOnlyThatPartAndAddsCounterTracks) {
  SimulateOptions options = brief_peak();
  options.policies = {"gangway"};
  const std::filesystem::path timeline = scratch_file("timeline.json");
  options.timeline_path = timeline.string();
  options.timeline_window = "2:2.5";
  const CommandRun run = simulate(options);
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json trace = nlohmann::json::parse(read_text(timeline));
  std::filesystem::remove(timeline);
  int spans = 0;
  int queue_counters = 0;
  int kv_counters = 0;
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event["ph"] == "M") continue;
    const double ts = event["ts"].get<double>();
    const double end = ts + event.value("dur", 0.0);
    EXPECT_GE(end, 2e6) << event.dump();
    EXPECT_LT(ts, 2.5e6) << event.dump();
    if (event["ph"] == "X") ++spans;
    if (event["ph"] == "C" && event["name"] == "queued requests") {
      ++queue_counters;
      EXPECT_TRUE(event["args"].contains("llama-3-70b"));
    }
    if (event["ph"] == "C" && event["name"] == "KV blocks in use, %") {
      ++kv_counters;
      EXPECT_TRUE(event["args"].contains("GPU 0 llama-3-8b"));
      EXPECT_TRUE(event["args"].contains("llama-3-70b (gang)"));
    }
  }
  EXPECT_GT(spans, 100);
  EXPECT_GT(queue_counters, 10);
  EXPECT_GT(kv_counters, 10);

  options.timeline_window = "5";
  EXPECT_EQ(simulate(options).status, 2);
  options.timeline_window = "7:6";
  EXPECT_EQ(simulate(options).status, 2);
}

TEST(SimulateReporting, ATraceThatSendsAModelNothingSaysSo) {
  SimulateOptions options = brief_peak();
  options.policies = {"gangway"};
  options.trace_path =
      std::string(GANGWAY_SOURCE_DIR) + "/data/traces/AzureLLMInferenceTrace_conv.csv";
  options.duration_s = 20;
  options.rate_scale = 8;
  // The shipped example maps rows to both tiers: no warning.
  CommandRun run = simulate(options);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.err, Not(HasSubstr("warning")));
  // A mapping with only the small model: the large one gets nothing, and stderr says so.
  options.settings.push_back("trace_mapping=[{model: llama-3-8b}]");
  run = simulate(options);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("warning: model 'llama-3-70b' received no requests"));
}

TEST(SimulateReporting, SetChangesAnyKeyAndBadOnesExitTwo) {
  SimulateOptions options = brief_peak();
  options.json = true;
  options.settings.push_back("policy.lease_max_ms=80");
  options.settings.push_back("workload.streams[lm-batch].arrival.rate_per_s=1");
  CommandRun run = simulate(options);
  ASSERT_EQ(run.status, 0) << run.err;
  options.settings.back() = "policy.lease_max_ms=fast";
  run = simulate(options);
  EXPECT_EQ(run.status, 2);
  EXPECT_THAT(run.err, HasSubstr("peak-mixed.yaml: --set policy.lease_max_ms: expected a number"));
  options.settings.back() = "no-equals-sign";
  run = simulate(options);
  EXPECT_EQ(run.status, 2);
  EXPECT_THAT(run.err, HasSubstr("--set: expected KEY.PATH=VALUE"));
}

}  // namespace
}  // namespace gangway
