// `gangway simulate` on a cluster scenario: the JSON's cluster block, determinism, the text
// report, and bad cluster input (exit status 2 with a located message).
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

// The peak scenario with a 1 s warm-up and `cluster_yaml` appended, in a temporary file.
std::string cluster_scenario(const std::string& name, const std::string& cluster_yaml) {
  std::ifstream in(std::string(GANGWAY_SOURCE_DIR) + "/examples/peak-mixed.yaml");
  std::stringstream peak;
  peak << in.rdbuf();
  // A short warm-up, so that a few simulated seconds measure something.
  std::string text = peak.str();
  const std::string warmup = "warmup_s: 5\n";
  const size_t at = text.find(warmup);
  EXPECT_NE(at, std::string::npos) << "examples/peak-mixed.yaml changed its warmup_s";
  if (at != std::string::npos) text.replace(at, warmup.size(), "warmup_s: 1\n");
  text += cluster_yaml;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("gangway-" + name + ".yaml")).string();
  std::ofstream(path) << text;
  return path;
}

SimulateOptions short_run(const std::string& path) {
  SimulateOptions options;
  options.scenario_path = path;
  options.duration_s = 3;
  options.rate_scale = 3.0;
  options.json = true;
  return options;
}

TEST(SimulateCluster, JsonHasPerNodeAndSpilloverBlocksAndIsDeterministic) {
  // 90 % of all arrivals go to node 0 first: about 2.4x its capacity, so it turns arrivals away
  // and the spillover block has retries to count (hundreds; a mildly loaded node may turn none).
  const std::string path = cluster_scenario(
      "cluster-ok", "cluster: {nodes: 3, router: load-report, pinned_share: 0.9}\n");
  SimulateOptions options = short_run(path);
  options.series_ms = 500;
  const CommandRun first = simulate(options);
  ASSERT_EQ(first.status, 0) << first.err;
  const nlohmann::json document = nlohmann::json::parse(first.out);
  const nlohmann::json& run = document["runs"][0];
  for (const char* key : {"classes", "models", "total", "node", "admission", "cluster", "series"}) {
    EXPECT_TRUE(run.contains(key)) << key;
  }
  const nlohmann::json& cluster = run["cluster"];
  EXPECT_EQ(cluster["nodes"], 3);
  EXPECT_EQ(cluster["router"], "load-report");
  ASSERT_EQ(cluster["per_node"].size(), 3u);
  for (const char* key : {"retried", "admitted_elsewhere", "rejected_again", "not_retried",
                          "retried_fraction", "reasons"}) {
    EXPECT_TRUE(cluster["spillover"].contains(key)) << key;
  }
  int64_t first_choice = 0;
  for (const nlohmann::json& node : cluster["per_node"]) {
    for (const char* key : {"first_choice", "retries_received", "node", "admission", "total"}) {
      EXPECT_TRUE(node.contains(key)) << key;
    }
    first_choice += node["first_choice"].get<int64_t>();
  }
  EXPECT_EQ(first_choice, run["total"]["arrived"].get<int64_t>());
  EXPECT_GT(cluster["spillover"]["retried"].get<int64_t>(), 100);

  const CommandRun second = simulate(options);
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_EQ(without_wall_clock(document).dump(),
            without_wall_clock(nlohmann::json::parse(second.out)).dump());

  options.json = false;
  options.series_ms.reset();
  const CommandRun table = simulate(options);
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("cluster of 3 nodes, router load-report"), std::string::npos)
      << table.out;
  std::filesystem::remove(path);
}

TEST(SimulateCluster, BadClusterInputExitsTwoWithALocatedMessage) {
  for (const auto& [yaml, where] :
       {std::pair<std::string, std::string>{"cluster:\n  nodes: 0\n", "cluster.nodes"},
        {"cluster:\n  nodes: 2\n  router: random\n", "cluster.router"}}) {
    const std::string path = cluster_scenario("cluster-bad", yaml);
    const CommandRun run = simulate(short_run(path));
    EXPECT_EQ(run.status, 2);
    EXPECT_NE(run.err.find(path + ":"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(where + ": expected"), std::string::npos) << run.err;
    std::filesystem::remove(path);
  }
  const std::string path = cluster_scenario("cluster-timeline", "cluster: {nodes: 2}\n");
  SimulateOptions options = short_run(path);
  options.timeline_path = "/tmp/gangway-cluster-timeline.json";
  const CommandRun run = simulate(options);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("--timeline"), std::string::npos) << run.err;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gangway
