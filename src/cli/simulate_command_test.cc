#include "cli/simulate_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/simulate_command_testing.h"

namespace gangway {
namespace {

const std::string kPeak = std::string(GANGWAY_SOURCE_DIR) + "/examples/peak-mixed.yaml";

SimulateOptions short_peak(uint64_t seed) {
  SimulateOptions options;
  options.scenario_path = kPeak;
  options.duration_s = 8;
  options.seed = seed;
  options.json = true;
  options.policies = {"gangway", "time-slice"};
  return options;
}

TEST(SimulateCommand, JsonHasTheContractKeys) {
  const CommandRun run = simulate(short_peak(1));
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json document = nlohmann::json::parse(run.out);
  for (const char* key : {"gangway_version", "scenario", "seed", "runs"}) {
    EXPECT_TRUE(document.contains(key)) << key;
  }
  ASSERT_EQ(document["runs"].size(), 2u);
  const nlohmann::json& first = document["runs"][0];
  EXPECT_EQ(first["policy"], "gangway");
  for (const char* key : {"simulated_s", "wall_s", "events", "requests"}) {
    EXPECT_TRUE(first["sim"].contains(key)) << key;
  }
  for (const char* key : {"gpu_utilization", "gang_barrier_fraction", "idle_while_waiting_fraction",
                          "lm_busy_fraction", "sm_busy_fraction"}) {
    EXPECT_TRUE(first["node"].contains(key)) << key;
  }
  for (const char* group : {"classes", "models"}) {
    ASSERT_FALSE(first[group].empty()) << group;
    for (const auto& [name, stats] : first[group].items()) {
      for (const char* key : {"arrived", "completed", "rejected", "failed", "cancelled",
                              "slo_attainment", "ttft_met", "ttft_attainment", "goodput_rps"}) {
        EXPECT_TRUE(stats.contains(key)) << group << "." << name << "." << key;
      }
      for (const char* latency : {"queue_ms", "ttft_ms", "tpot_ms", "e2e_ms"}) {
        for (const char* key : {"mean", "p50", "p90", "p99", "max"}) {
          EXPECT_TRUE(stats[latency].contains(key)) << name << "." << latency << "." << key;
        }
      }
    }
  }
  EXPECT_TRUE(first["classes"].contains("interactive"));
  EXPECT_TRUE(first["models"].contains("llama-3-70b"));
}

TEST(SimulateCommand, SameSeedGivesIdenticalJsonButWallClock) {
  for (uint64_t seed : {1u, 7u, 42u}) {
    const CommandRun a = simulate(short_peak(seed));
    const CommandRun b = simulate(short_peak(seed));
    ASSERT_EQ(a.status, 0) << a.err;
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(without_wall_clock(nlohmann::json::parse(a.out)),
              without_wall_clock(nlohmann::json::parse(b.out)))
        << "seed " << seed;
  }
}

TEST(SimulateCommand, DifferentSeedsGiveDifferentRuns) {
  const nlohmann::json a = without_wall_clock(nlohmann::json::parse(simulate(short_peak(1)).out));
  const nlohmann::json b = without_wall_clock(nlohmann::json::parse(simulate(short_peak(2)).out));
  EXPECT_NE(a["runs"][0]["models"], b["runs"][0]["models"]);
  EXPECT_NE(a["runs"][0]["sim"]["requests"], b["runs"][0]["sim"]["requests"]);
}

TEST(SimulateCommand, SeveralPoliciesSeeTheSameArrivals) {
  SimulateOptions options = short_peak(3);
  options.duration_s = 7;  // a 5 s warm-up, then 2 s measured
  options.drain_s = 5;     // the collapsing baselines would otherwise drain for minutes
  options.policies = {"gangway",    "fcfs",          "sm-first",         "lm-first",
                      "time-slice", "easy-backfill", "gangway-exclusive"};
  const CommandRun run = simulate(options);
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json document = nlohmann::json::parse(run.out);
  const auto requests = document["runs"][0]["sim"]["requests"];
  for (const auto& policy_run : document["runs"]) {
    EXPECT_EQ(policy_run["sim"]["requests"], requests) << policy_run["policy"];
    // Every request that arrived ended exactly once.
    const auto& total = policy_run["total"];
    EXPECT_EQ(total["arrived"].get<int64_t>(),
              total["completed"].get<int64_t>() + total["rejected"].get<int64_t>() +
                  total["failed"].get<int64_t>() + total["cancelled"].get<int64_t>())
        << policy_run["policy"];
  }
}

// runs[].prediction: the output-length predictor's error per model, and how exclusive-mode
// backfill reservations held; with scheduler.oracle_output_lengths the predictor reads the true
// lengths, so its token error is (nearly) zero.
TEST(SimulateCommand, JsonReportsPredictionAccuracyAndTheOracle) {
  SimulateOptions options = short_peak(5);
  options.duration_s = 10;
  options.drain_s = 10;
  options.policies = {"easy-backfill", "gangway-exclusive", "gangway"};
  const CommandRun predicted = simulate(options);
  ASSERT_EQ(predicted.status, 0) << predicted.err;
  const nlohmann::json document = nlohmann::json::parse(predicted.out);
  for (const auto& run : document["runs"]) {
    const nlohmann::json& prediction = run["prediction"];
    EXPECT_FALSE(prediction["oracle"].get<bool>());
    for (const char* model : {"llama-3-8b", "llama-3-70b"}) {
      const nlohmann::json& accuracy = prediction["models"][model];
      for (const char* key : {"samples", "mean_actual_tokens", "mean_abs_error_tokens",
                              "relative_error", "mean_abs_error_s"}) {
        EXPECT_TRUE(accuracy.contains(key)) << model << "." << key;
      }
      EXPECT_GT(accuracy["samples"].get<int64_t>(), 0) << model;
      EXPECT_GT(accuracy["mean_abs_error_tokens"].get<double>(), 0) << model;
    }
    for (const char* key : {"reservations", "overruns", "overrun_fraction", "mean_overrun_ms",
                            "max_overrun_ms", "mean_early_ms"}) {
      EXPECT_TRUE(prediction["backfill"].contains(key)) << key;
    }
  }
  // Exclusive-mode policies reserve; lease mode has no reservation.
  EXPECT_GT(document["runs"][0]["prediction"]["backfill"]["reservations"].get<int64_t>(), 0);
  EXPECT_GT(document["runs"][1]["prediction"]["backfill"]["reservations"].get<int64_t>(), 0);
  EXPECT_EQ(document["runs"][2]["prediction"]["backfill"]["reservations"].get<int64_t>(), 0);

  // The same scenario with the oracle: the predictor reads the true lengths.
  std::ifstream in(kPeak);
  std::stringstream text;
  text << in.rdbuf();
  const std::string oracle_path =
      (std::filesystem::temp_directory_path() / "gangway-oracle-peak.yaml").string();
  {
    std::ofstream out(oracle_path);
    out << text.str() << "scheduler: {oracle_output_lengths: true}\n";
  }
  options.scenario_path = oracle_path;
  const CommandRun oracle = simulate(options);
  std::filesystem::remove(oracle_path);
  ASSERT_EQ(oracle.status, 0) << oracle.err;
  const nlohmann::json oracle_document = nlohmann::json::parse(oracle.out);
  for (const auto& run : oracle_document["runs"]) {
    EXPECT_TRUE(run["prediction"]["oracle"].get<bool>());
    for (const char* model : {"llama-3-8b", "llama-3-70b"}) {
      const nlohmann::json& accuracy = run["prediction"]["models"][model];
      EXPECT_GT(accuracy["samples"].get<int64_t>(), 0) << model;
      EXPECT_LT(accuracy["relative_error"].get<double>(), 0.01) << model;
    }
  }
  // Same arrivals either way.
  EXPECT_EQ(oracle_document["runs"][0]["sim"]["requests"], document["runs"][0]["sim"]["requests"]);
}

TEST(SimulateCommand, BadInputExitsWithTwoAndOneClearLine) {
  SimulateOptions missing;
  missing.scenario_path = "/nonexistent/scenario.yaml";
  CommandRun run = simulate(missing);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("/nonexistent/scenario.yaml"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");

  SimulateOptions bad_policy = short_peak(1);
  bad_policy.policies = {"round-robin"};
  run = simulate(bad_policy);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("unknown policy 'round-robin'"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("gangway"), std::string::npos) << "lists the allowed names: " << run.err;

  // Gang policy parameters out of range name their key (scenario policy section).
  for (const auto& [policy, key] : std::vector<std::pair<std::string, std::string>>{
           {"{name: gangway, large_weight: 0}", "policy.large_weight"},
           {"{name: gangway, small_weight: -1}", "policy.small_weight"},
           {"{name: gangway, lease_max_ms: 2, lease_min_ms: 1}", "policy.lease_max_ms"},
           {"{name: gangway-exclusive, exclusive_phase_max_ms: 0}",
            "policy.exclusive_phase_max_ms"}}) {
    const std::string path =
        (std::filesystem::temp_directory_path() / "gangway-bad-policy.yaml").string();
    {
      std::ofstream out(path);
      out << "models:\n  - {name: s, tier: small, shape: llama-3-8b}\n"
             "  - {name: l, tier: large, shape: llama-3-70b}\npolicy: "
          << policy
          << "\nworkload:\n  streams:\n    - {name: c, model: s, arrival: {rate_per_s: 1}}\n";
    }
    SimulateOptions bad_gang;
    bad_gang.scenario_path = path;
    run = simulate(bad_gang);
    std::filesystem::remove(path);
    EXPECT_EQ(run.status, 2) << policy;
    EXPECT_NE(run.err.find(key), std::string::npos) << run.err;
  }

  SimulateOptions format_alone = short_peak(1);
  format_alone.trace_format = "azure";
  EXPECT_EQ(simulate(format_alone).status, 2);

  SimulateOptions shorter_than_warmup = short_peak(1);
  shorter_than_warmup.duration_s = 4;  // the scenario warms up for 5 s
  run = simulate(shorter_than_warmup);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("warmup_s"), std::string::npos) << run.err;

  SimulateOptions bad_scale = short_peak(1);
  bad_scale.rate_scale = 0;
  run = simulate(bad_scale);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("--rate-scale"), std::string::npos) << run.err;

  SimulateOptions bad_format = short_peak(1);
  bad_format.trace_path =
      std::string(GANGWAY_SOURCE_DIR) + "/data/traces/AzureLLMInferenceTrace_conv.csv";
  bad_format.trace_format = "parquet";
  run = simulate(bad_format);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("azure"), std::string::npos) << run.err;
}

TEST(SimulateCommand, TraceReplacesTheWorkloadAndRateScaleCompressesIt) {
  SimulateOptions options = short_peak(1);
  options.policies = {"gangway"};
  options.trace_path =
      std::string(GANGWAY_SOURCE_DIR) + "/data/traces/AzureLLMInferenceTrace_conv.csv";
  const auto requests = [](const CommandRun& run) {
    return nlohmann::json::parse(run.out)["runs"][0]["sim"]["requests"].get<int64_t>();
  };
  options.duration_s = 120;
  const CommandRun normal = simulate(options);
  ASSERT_EQ(normal.status, 0) << normal.err;
  // Four times the rate over a quarter of the window replays exactly the same rows.
  options.duration_s = 30;
  options.rate_scale = 4;
  const CommandRun fast = simulate(options);
  ASSERT_EQ(fast.status, 0) << fast.err;
  EXPECT_GT(requests(normal), 100);
  EXPECT_EQ(requests(fast), requests(normal));
}

}  // namespace
}  // namespace gangway
