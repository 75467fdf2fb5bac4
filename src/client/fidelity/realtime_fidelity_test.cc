// Real-time fidelity: the same small workload through the server (sent by the load generator)
// and through the simulator gives the same per-class TTFT, within a stated tolerance.
//
// Why the two can differ at all: the server's emulated GPUs take the cost model's time on real
// timers, and every event is handled a little after it happened (timer wake-up, the hop between
// threads, HTTP and SSE on loopback, the client's parsing): the TTFT the server adds. The
// simulator has none of that, so real TTFT = simulated TTFT + a small positive overhead, plus the
// knock-on effect of slightly later iterations on batching. Tolerance: the per-class mean and
// median TTFT agree within 5 ms + 20 % of the simulated value (docs/server.md reports the figures
// measured). On a quiet machine the means differ by 0.5-1.5 ms; the margin is for a shared 2-core
// machine busy with other work, where the server's threads wait for a CPU (measured with two
// other builds running: +2.5 ms interactive, +5.3 ms standard). Wall-clock latencies mean
// nothing under a sanitizer, so this test is labelled slow and runs in the normal build only.
#include <gtest/gtest.h>

#include "client/load_generator.h"
#include "config/scenario_simulation.h"
#include "config/scenario_source.h"
#include "sched/policy_registry.h"
#include "server/server_harness_for_tests.h"
#include "sim/simulator.h"

namespace gangway {
namespace {

const char* kFidelityScenario = R"(
name: fidelity
seed: 11
duration_s: 4
warmup_s: 0.5
drain_s: 20
models:
  - {name: llama-3-8b, tier: small, shape: llama-3-8b, gpus: all}
slo_classes:
  - {name: interactive, ttft_ms: 200, tpot_ms: 50}
  - {name: standard, ttft_ms: 2000}
workload:
  streams:
    - name: chat
      model: llama-3-8b
      class: interactive
      arrival: {process: poisson, rate_per_s: 120}
      prompt_tokens: {dist: lognormal, mean: 256, p99: 1024, max: 2048}
      output_tokens: {dist: geometric, mean: 16, max: 64}
      max_tokens: 64
    - name: documents
      model: llama-3-8b
      class: standard
      arrival: {process: poisson, rate_per_s: 40}
      prompt_tokens: {dist: lognormal, mean: 1024, p99: 3072, max: 4096}
      output_tokens: {dist: geometric, mean: 24, max: 96}
      max_tokens: 96
server:
  log_level: error
)";

TEST(RealtimeFidelityTest, PerClassTtftMatchesTheSimulator) {
  testing::RunningServer server(kFidelityScenario);
  const Scenario& scenario = server.scenario();

  std::unique_ptr<RequestSource> load_source = make_request_source(scenario);
  LoadOptions options;
  options.target.port = server.port();
  options.duration = scenario.duration;
  options.warmup = scenario.warmup;
  options.drain_timeout = std::chrono::seconds(20);
  LoadGenerator generator(scenario, *load_source, options);
  const LoadResult real = generator.run();

  std::unique_ptr<RequestSource> sim_source = make_request_source(scenario);
  Simulator simulator(scenario.node, scenario.scheduler, make_policy(scenario.policy), nullptr,
                      *sim_source, simulation_options_of(scenario));
  const SimulationResult simulated = simulator.run();

  EXPECT_TRUE(real.transport_errors.empty());
  for (const SloClass& slo : scenario.node.slo_classes) {
    const RequestStats& r = real.metrics.slo_class(slo.id);
    const RequestStats& s = simulated.metrics.slo_class(slo.id);
    SCOPED_TRACE(slo.name);
    EXPECT_EQ(r.arrived(), s.arrived());
    EXPECT_EQ(r.completed(), r.arrived());
    EXPECT_EQ(s.completed(), s.arrived());
    const double real_mean = r.ttft_ms().mean();
    const double sim_mean = s.ttft_ms().mean();
    const double real_p50 = r.ttft_ms().quantile(0.5);
    const double sim_p50 = s.ttft_ms().quantile(0.5);
    std::printf(
        "%-12s TTFT mean real %.2f ms sim %.2f ms | p50 real %.2f sim %.2f | p99 real %.2f "
        "sim %.2f | server-added p50 %.2f p99 %.2f\n",
        slo.name.c_str(), real_mean, sim_mean, real_p50, sim_p50, r.ttft_ms().quantile(0.99),
        s.ttft_ms().quantile(0.99), real.server_added_ttft_ms.quantile(0.5),
        real.server_added_ttft_ms.quantile(0.99));
    EXPECT_NEAR(real_mean, sim_mean, 5.0 + 0.2 * sim_mean);
    EXPECT_NEAR(real_p50, sim_p50, 5.0 + 0.2 * sim_p50);
    // The same requests: the same prompt and output tokens.
    EXPECT_EQ(r.prompt_tokens(), s.prompt_tokens());
    EXPECT_EQ(r.output_tokens(), s.output_tokens());
  }
}

}  // namespace
}  // namespace gangway
