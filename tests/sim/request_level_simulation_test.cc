// The request-level simulator (gangway in front of engine processes that batch by themselves):
// every request ends exactly once, tiers switch by pausing engines (lease) or gating dispatch
// (exclusive), the pause and resume latencies are paid on every switch, and a seed replays
// identically.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "config/request_level_setup.h"
#include "config/scenario.h"
#include "config/scenario_source.h"
#include "sim/request_level_simulator.h"

namespace gangway {
namespace {

// Two small replicas and the large model, each engine process of `kind`, under a mixed load.
Scenario engine_scenario(const std::string& kind, const std::string& extra_server = "") {
  const std::string yaml = R"(
name: engines
seed: 7
duration_s: 20
models:
  - {name: llama-3-8b, tier: small, shape: llama-3-8b, gpus: [0, 1]}
  - {name: llama-3-70b, tier: large, shape: llama-3-70b, gpus: all, tensor_parallel: 8}
policy: {name: gangway, lease_max_ms: 50, max_large_wait_ms: 200}
workload:
  streams:
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 20}, prompt_tokens: 64, output_tokens: {dist: geometric, mean: 32, max: 128}, max_tokens: 128}
    - {name: big, model: llama-3-70b, arrival: {rate_per_s: 2}, prompt_tokens: 64, output_tokens: 32, max_tokens: 32}
server:
)" + extra_server + R"(
  engines:
    llama-3-8b: {kind: )" + kind +
                           R"(, urls: [http://127.0.0.1:8100, http://127.0.0.1:8101]}
    llama-3-70b: {kind: )" +
                           kind + R"(, urls: [http://127.0.0.1:8200]}
)";
  return parse_scenario(yaml, "engines.yaml");
}

struct EngineRun {
  SimulationResult result;
  int64_t switches = 0;
  int64_t pauses = 0;
  int64_t resumes = 0;
  Duration switch_latency{0};
};

EngineRun simulate(const Scenario& scenario) {
  RequestLevelSimulationSpec spec;
  spec.engines = engine_descriptors(scenario.node, scenario.server.engines);
  spec.core = request_level_options(scenario.server.engines, scenario.scheduler, scenario.policy);
  spec.calls.pause = scenario.server.engines.simulated_pause_latency;
  spec.calls.resume = scenario.server.engines.simulated_resume_latency;
  std::unique_ptr<RequestSource> source = make_request_source(scenario);
  SimulationOptions options;
  options.duration = scenario.duration;
  options.drain_limit = scenario.drain_limit;
  RequestLevelSimulator simulator(scenario.node, spec, *source, options);
  EngineRun run{simulator.run(), 0, 0, 0, Duration(0)};
  run.switches = simulator.core().tier_switches();
  run.pauses = simulator.pauses();
  run.resumes = simulator.resumes();
  run.switch_latency = simulator.core().switch_latency();
  return run;
}

TEST(RequestLevelSimulationTest, LeaseModeCompletesEveryRequestAndPausesOnEachSwitch) {
  const EngineRun run = simulate(engine_scenario("vllm"));
  const RequestStats& total = run.result.metrics.total();
  EXPECT_GT(total.arrived(), 300u);
  EXPECT_EQ(total.arrived(), total.completed());
  EXPECT_EQ(run.result.requests, static_cast<int64_t>(total.arrived()));
  // Both tiers had work throughout: many switches, each pausing one tier and resuming the other.
  EXPECT_GT(run.switches, 20);
  EXPECT_GT(run.pauses, run.switches);
  EXPECT_GT(run.resumes, run.switches);
  EXPECT_GT(run.result.gang_phases, 10);
  // A switch pays a pause (after the iteration in flight) and a resume at least.
  EXPECT_GE(run.switch_latency, std::chrono::microseconds(1600));
  // The GPUs ran both tiers' iterations.
  EXPECT_GT(run.result.node_time.total_seconds(GpuActivity::kRunningSmall), 0.0);
  EXPECT_GT(run.result.node_time.total_seconds(GpuActivity::kRunningLarge), 0.0);
}

TEST(RequestLevelSimulationTest, ExclusiveModeNeverPauses) {
  const EngineRun run = simulate(engine_scenario("openai"));
  const RequestStats& total = run.result.metrics.total();
  EXPECT_EQ(total.arrived(), total.completed());
  EXPECT_GT(run.switches, 10);
  EXPECT_EQ(run.pauses, 0);
  EXPECT_EQ(run.resumes, 0);
}

// The mode aliases run their own mode over a scenario written for the other (`--policy
// gangway-lease` on a scenario with `mode: exclusive`, and the reverse): pausable engines pause
// in lease mode only.
TEST(RequestLevelSimulationTest, ModeAliasesRunTheirModeWhateverTheScenarioSays) {
  Scenario lease = engine_scenario("vllm");
  lease.policy.mode = ExecutionMode::kExclusive;
  lease.policy.name = "gangway-lease";
  EXPECT_GT(simulate(lease).pauses, 0);
  Scenario exclusive = engine_scenario("vllm");
  exclusive.policy.mode = ExecutionMode::kLease;
  exclusive.policy.name = "gangway-exclusive";
  EXPECT_EQ(simulate(exclusive).pauses, 0);
}

TEST(RequestLevelSimulationTest, SlowerPauseAndResumeCallsCostLatency) {
  const EngineRun fast = simulate(engine_scenario("vllm"));
  const EngineRun slow = simulate(
      engine_scenario("vllm", "  engine_pause_latency_s: 0.03\n  engine_resume_latency_s: 0.03"));
  EXPECT_GE(slow.switch_latency, std::chrono::milliseconds(60));
  const double fast_ttft = fast.result.metrics.total().ttft_ms().mean();
  const double slow_ttft = slow.result.metrics.total().ttft_ms().mean();
  EXPECT_GT(slow_ttft, fast_ttft + 5.0) << fast_ttft << " ms vs " << slow_ttft << " ms";
}

TEST(RequestLevelSimulationTest, ASeedReplaysIdentically) {
  const Scenario scenario = engine_scenario("vllm");
  const EngineRun a = simulate(scenario);
  const EngineRun b = simulate(scenario);
  const double window = a.result.measured_s;
  EXPECT_EQ(a.result.metrics.total_json(window).dump(), b.result.metrics.total_json(window).dump());
  EXPECT_EQ(a.result.events, b.result.events);
  EXPECT_EQ(a.switches, b.switches);
}

}  // namespace
}  // namespace gangway
