// `gangway simulate --routing`: routing rules run side by side on the same arrivals, the JSON
// carries the KV layer's account (hit rates per model and per GPU, preemption choices), and bad
// KV input exits with status 2 and one line naming the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/simulate_command.h"
#include "cli/simulate_command_testing.h"

namespace gangway {
namespace {

// A scenario file in a fresh temporary folder; removed with the object.
struct ScenarioFile {
  std::filesystem::path path;
  explicit ScenarioFile(const std::string& yaml) {
    path = std::filesystem::temp_directory_path() /
           ("gangway-routing-test-" + std::to_string(std::hash<std::string>{}(yaml)) + ".yaml");
    std::ofstream(path) << yaml;
  }
  ~ScenarioFile() { std::filesystem::remove(path); }
};

const std::string kPrefixScenario = R"(name: prefix-groups
seed: 5
warmup_s: 1
duration_s: 4
drain_s: 30
models:
  - {name: llama-3-8b, tier: small, gpus: [0, 1, 2, 3]}
  - {name: llama-3-70b, tier: large}
policy: {name: gangway, mode: lease}
workload:
  streams:
    - name: chat
      model: llama-3-8b
      arrival: {rate_per_s: 80}
      prompt_tokens: {dist: lognormal, mean: 100, p99: 400}
      output_tokens: {dist: geometric, mean: 16, max: 64}
      max_tokens: 64
      prefix: {groups: 16, group_tokens: 1024}
    - name: lm
      model: llama-3-70b
      class: standard
      arrival: {rate_per_s: 4}
      prompt_tokens: 200
      output_tokens: 16
      prefix: {groups: 2, group_tokens: 512}
)";

TEST(RoutingCommand, RoutingRulesRunSideBySideAndReportHitRates) {
  const ScenarioFile file(kPrefixScenario);
  SimulateOptions options;
  options.scenario_path = file.path.string();
  options.json = true;
  options.routings = {"predicted-ttft", "round-robin", "least-loaded",
                      "cache-only",     "sglang",      "late-binding"};
  const CommandRun run = simulate(options);
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json document = nlohmann::json::parse(run.out);
  ASSERT_EQ(document["runs"].size(), 6u);
  const auto requests = document["runs"][0]["sim"]["requests"];
  for (size_t i = 0; i < 6; ++i) {
    const nlohmann::json& r = document["runs"][i];
    EXPECT_EQ(r["routing"], options.routings[i]);
    EXPECT_EQ(r["sim"]["requests"], requests) << "same arrivals for every rule";
    const nlohmann::json& cache = r["kv"]["prefix_cache"];
    for (const char* model : {"llama-3-8b", "llama-3-70b"}) {
      const nlohmann::json& counters = cache["models"][model];
      for (const char* key : {"requests", "hit_requests", "request_hit_rate", "prompt_tokens",
                              "cached_tokens", "host_cached_tokens", "token_hit_rate"}) {
        EXPECT_TRUE(counters.contains(key)) << model << "." << key;
      }
      EXPECT_GT(counters["token_hit_rate"].get<double>(), 0.3)
          << r["routing"] << " " << model << ": every request shares a group prompt";
    }
    // One pool per (GPU, small model) and the large model's, which spans every GPU.
    ASSERT_EQ(cache["pools"].size(), 5u);
    EXPECT_EQ(cache["pools"][0]["gpu"], 0);
    EXPECT_EQ(cache["pools"][4]["gpu"], "all");
    EXPECT_EQ(cache["pools"][4]["model"], "llama-3-70b");
    int64_t per_gpu_requests = 0;
    for (int p = 0; p < 4; ++p) per_gpu_requests += cache["pools"][p]["requests"].get<int64_t>();
    EXPECT_EQ(per_gpu_requests, cache["models"]["llama-3-8b"]["requests"].get<int64_t>());
    for (const char* key : {"preemption", "split", "host", "steals"}) {
      EXPECT_TRUE(r["kv"].contains(key)) << key;
    }
    for (const char* mode : {"pause", "swap", "recompute"}) {
      EXPECT_TRUE(r["kv"]["preemption"]["models"]["llama-3-8b"].contains(mode)) << mode;
      EXPECT_TRUE(r["kv"]["preemption"]["reasons"]["gang"].contains(mode)) << mode;
    }
  }
}

TEST(RoutingCommand, EveryPolicyRunsUnderEveryRoutingRule) {
  const ScenarioFile file(kPrefixScenario);
  SimulateOptions options;
  options.scenario_path = file.path.string();
  options.json = true;
  options.duration_s = 2;
  options.policies = {"gangway", "fcfs"};
  options.routings = {"predicted-ttft", "sglang"};
  const CommandRun run = simulate(options);
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json document = nlohmann::json::parse(run.out);
  ASSERT_EQ(document["runs"].size(), 4u);
  EXPECT_EQ(document["runs"][1]["policy"], "gangway");
  EXPECT_EQ(document["runs"][1]["routing"], "sglang");
  EXPECT_EQ(document["runs"][2]["policy"], "fcfs");
  EXPECT_EQ(document["runs"][2]["routing"], "predicted-ttft");
}

TEST(RoutingCommand, BadRoutingAndKvInputExitWithTwo) {
  const ScenarioFile file(kPrefixScenario);
  SimulateOptions bad_routing;
  bad_routing.scenario_path = file.path.string();
  bad_routing.routings = {"random"};
  CommandRun run = simulate(bad_routing);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("--routing"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("predicted-ttft"), std::string::npos) << run.err;

  const std::string rest = kPrefixScenario.substr(kPrefixScenario.find("models:"));
  const ScenarioFile swap_without_host(
      "node: {host_memory_gib: 0}\n"
      "scheduler: {preemption: swap}\n" +
      rest);
  SimulateOptions options;
  options.scenario_path = swap_without_host.path.string();
  run = simulate(options);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("scheduler.preemption"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("node.host_memory_gib"), std::string::npos) << run.err;

  const ScenarioFile no_room("node: {activation_reserve_gb: 70}\n" + rest);
  options.scenario_path = no_room.path.string();
  run = simulate(options);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("activation_reserve_gb"), std::string::npos) << run.err;

  const ScenarioFile bad_block("node: {kv_block_tokens: 48}\n" + rest);
  options.scenario_path = bad_block.path.string();
  run = simulate(options);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("node.kv_block_tokens"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace gangway
