// `gangway capacity`: finds the load at which the SLOs stop holding, with an interval over seeds,
// says when the answer is outside the searched range, compares settings, and rejects bad flags.
// On a small node with a constant-time cost model, so that a whole search takes a moment.
#include "cli/capacity_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace gangway {
namespace {

using ::testing::HasSubstr;

// Two GPUs with a small model whose iterations take 10 ms; a request is one prefill and three
// decode iterations, at most four sequences per batch.
constexpr const char* kScenario = R"(name: tiny-capacity
seed: 1
duration_s: 6
warmup_s: 1
drain_s: 10
node: {gpus: 2}
models:
  - name: small
    tier: small
    shape: llama-3-8b
    max_num_seqs: 4
    cost: {model: constant, iteration_ms: 10}
slo_classes:
  - {name: interactive, ttft_ms: 200}
workload:
  streams:
    - {name: chat, model: small, arrival: {rate_per_s: 50}, prompt_tokens: 16, output_tokens: 4,
       max_tokens: 4}
)";

class CapacityCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("capacity-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml");
    std::ofstream(path_) << kScenario;
  }
  void TearDown() override { std::filesystem::remove(path_); }

  CapacityOptions options() const {
    CapacityOptions options;
    options.scenario_path = path_.string();
    options.seeds = "2";
    options.tolerance = 0.1;
    options.jobs = 2;
    options.no_progress = true;
    return options;
  }

  struct Result {
    int status;
    std::string out;
    std::string err;
  };
  static Result run(const CapacityOptions& options) {
    std::ostringstream out;
    std::ostringstream err;
    const int status = run_capacity(options, out, err);
    return {status, out.str(), err.str()};
  }

  std::filesystem::path path_;
};

TEST_F(CapacityCommand, FindsTheHighestLoadMeetingTheTargetWithAnInterval) {
  CapacityOptions json = options();
  json.json = true;
  const Result result = run(json);
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json document = nlohmann::json::parse(result.out);
  EXPECT_EQ(document["criterion"]["class_targets"]["interactive"], 0.99);
  EXPECT_EQ(document["seeds"], nlohmann::json::array({1, 2}));
  // small and mix (no large model: no large search).
  ASSERT_EQ(document["results"].size(), 2u);
  for (const nlohmann::json& found : document["results"]) {
    EXPECT_EQ(found["bound"], "inside");
    const double capacity = found["capacity_rps"]["mean"];
    EXPECT_GT(capacity, 50);   // the scenario as written passes
    EXPECT_LT(capacity, 400);  // two GPUs cannot finish more than 200 requests/s
    ASSERT_TRUE(found["capacity_rps"]["ci95"].is_array());
    for (const nlohmann::json& seed : found["per_seed"]) {
      EXPECT_TRUE(seed["capacity"]["passed"]);
      EXPECT_GE(seed["capacity"]["worst"]["value"].get<double>(), 0.99);
      EXPECT_FALSE(seed["first_failure"]["passed"]);
      EXPECT_LT(seed["first_failure"]["worst"]["value"].get<double>(), 0.99);
      // The bracket is within the tolerance.
      EXPECT_LE(
          seed["first_failure"]["scale"].get<double>() / seed["capacity"]["scale"].get<double>(),
          1.1 + 1e-9);
    }
  }
}

TEST_F(CapacityCommand, SaysWhenTheAnswerIsAboveTheRange) {
  CapacityOptions above = options();
  above.range = "0.05:0.5";
  above.searches = {"small"};
  const Result result = run(above);
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("above range"));
  EXPECT_THAT(result.out, HasSubstr("still met its target at the top of the range"));
}

TEST_F(CapacityCommand, SaysWhenTheAnswerIsBelowTheRange) {
  CapacityOptions impossible = options();
  impossible.settings = {"slo_classes[0].ttft_ms=1"};  // less than one iteration
  impossible.searches = {"small"};
  impossible.json = true;
  const Result result = run(impossible);
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json document = nlohmann::json::parse(result.out);
  EXPECT_EQ(document["results"][0]["bound"], "below_range");
  EXPECT_TRUE(document["results"][0]["capacity_rps"].is_null());
}

TEST_F(CapacityCommand, VaryComparesSettingsSideBySide) {
  CapacityOptions grid = options();
  grid.varies = {"models[small].max_num_seqs=1,8"};
  grid.searches = {"small"};
  grid.json = true;
  const Result result = run(grid);
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json document = nlohmann::json::parse(result.out);
  ASSERT_EQ(document["results"].size(), 2u);
  EXPECT_EQ(document["results"][0]["settings"]["models[small].max_num_seqs"], "1");
  EXPECT_EQ(document["results"][0]["label"], "gangway-lease max_num_seqs=1");
  // Batching eight sequences serves more than running them one at a time.
  EXPECT_GT(document["results"][1]["capacity_rps"]["mean"].get<double>(),
            1.5 * document["results"][0]["capacity_rps"]["mean"].get<double>());
}

TEST_F(CapacityCommand, TheTableFitsOneHundredColumns) {
  CapacityOptions table = options();
  table.policies = {"gangway", "fcfs"};
  const Result result = run(table);
  ASSERT_EQ(result.status, 0) << result.err;
  std::istringstream lines(result.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 100u) << line;
  }
  EXPECT_THAT(result.out, HasSubstr("best for small:"));
}

TEST_F(CapacityCommand, BadFlagsExitTwoNamingTheFlag) {
  const auto error_of = [&](auto change) {
    CapacityOptions bad = options();
    change(bad);
    const Result result = run(bad);
    EXPECT_EQ(result.status, 2);
    return result.err;
  };
  EXPECT_THAT(error_of([](CapacityOptions& o) { o.measure = "speed"; }), HasSubstr("--measure"));
  EXPECT_THAT(error_of([](CapacityOptions& o) { o.range = "5:1"; }), HasSubstr("--range"));
  EXPECT_THAT(error_of([](CapacityOptions& o) { o.varies = {"policy.lease_max_ms=,"}; }),
              HasSubstr("--vary"));
  EXPECT_THAT(error_of([](CapacityOptions& o) { o.searches = {"large"}; }),
              HasSubstr("no large-model traffic"));
  EXPECT_THAT(error_of([](CapacityOptions& o) { o.settings = {"seed=-1"}; }),
              HasSubstr("--set seed"));
  // A --vary value is checked like --set, and its errors name --vary.
  EXPECT_THAT(error_of([](CapacityOptions& o) { o.varies = {"lease_max_ms=60,100"}; }),
              HasSubstr("--vary lease_max_ms: unknown key"));
  EXPECT_THAT(error_of([](CapacityOptions& o) { o.varies = {"policy.lease_max_ms=100,-5"}; }),
              HasSubstr("--vary policy.lease_max_ms"));
  EXPECT_THAT(error_of([](CapacityOptions& o) { o.rate_scale = 2.0; }), HasSubstr("--rate-scale"));
}

}  // namespace
}  // namespace gangway
