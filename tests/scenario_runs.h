// What the simulation tests share: examples/peak-mixed.yaml and its scaled variants, running a
// scenario as `gangway simulate` would (its node, scheduler options, policy, windows and faults),
// setting each tier's offered rate, drawing random faults, and the checks that every request ended
// exactly once and none was stranded.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "config/scenario.h"
#include "config/scenario_simulation.h"
#include "config/scenario_source.h"
#include "sched/policy_registry.h"
#include "sim/cluster_simulator.h"
#include "sim/fault_spec.h"
#include "sim/simulator.h"
#include "workload/request_source.h"
#include "workload/rng.h"

namespace gangway {

// A node beside peak-mixed.yaml's: with the 8B model on every GPU, a small model of its own on GPUs
// 0 and 1 (two replicas sharing those GPUs round robin, a linear cost model), and the gang.
inline constexpr const char* kTwoSmallModelsScenario = R"(
node: {gpus: 8, hardware: h100-sxm-80gb, kv_block_tokens: 16}
models:
  - {name: llama-3-8b, tier: small, shape: llama-3-8b, gpus: all}
  - name: tiny
    tier: small
    shape: {layers: 16, hidden: 2048, q_heads: 32, kv_heads: 8, head_dim: 64, ffn: 8192,
            parameters_b: 1.24, dtype_bytes: 2}
    gpus: [0, 1]
    cost: {model: linear, base_ms: 4, per_prefill_token_us: 20, per_decode_seq_us: 50,
           per_kv_token_ns: 1}
  - {name: llama-3-70b, tier: large, shape: llama-3-70b, gpus: all, tensor_parallel: 8}
slo_classes:
  - {name: interactive, ttft_ms: 200, tpot_ms: 50, weight: 4}
  - {name: standard, ttft_ms: 2000, weight: 2, downgrade_to: batch}
  - {name: batch, weight: 1}
workload:
  streams:
    - {name: a, model: llama-3-8b, class: interactive, arrival: {process: poisson, rate_per_s: 300},
       prompt_tokens: {dist: lognormal, mean: 128, p99: 640, max: 2048},
       output_tokens: {dist: geometric, mean: 32, max: 256}, max_tokens: 256}
    - {name: b, model: tiny, class: interactive, arrival: {process: gamma, rate_per_s: 200, cv: 3},
       prompt_tokens: {dist: lognormal, mean: 256, p99: 1500, max: 4096},
       output_tokens: {dist: geometric, mean: 16, max: 128}, max_tokens: 128}
    - {name: c, model: tiny, class: batch, arrival: {process: poisson, rate_per_s: 100},
       prompt_tokens: {dist: lognormal, mean: 64, p99: 320, max: 1024},
       output_tokens: {dist: geometric, mean: 64, max: 512}, max_tokens: 512}
    - {name: d, model: llama-3-70b, class: standard, arrival: {process: poisson, rate_per_s: 20},
       prompt_tokens: {dist: lognormal, mean: 512, p99: 3000, max: 8192},
       output_tokens: {dist: geometric, mean: 28, max: 256}, max_tokens: 256}
    - {name: e, model: llama-3-70b, class: batch, arrival: {process: poisson, rate_per_s: 10},
       prompt_tokens: {dist: lognormal, mean: 112, p99: 576, max: 2048},
       output_tokens: {dist: geometric, mean: 28, max: 256}, max_tokens: 256}
)";

inline SimulationResult simulate_scenario(const Scenario& scenario, RequestSource& source) {
  Simulator simulator(scenario.node, scenario.scheduler, make_policy(scenario.policy), nullptr,
                      source, simulation_options_of(scenario));
  return simulator.run();
}

// The scenario on its `cluster` of nodes, as `gangway simulate` runs it. REQUIRES:
// scenario.cluster.
inline ClusterResult simulate_cluster(const Scenario& scenario) {
  std::unique_ptr<RequestSource> source = make_request_source(scenario);
  ClusterSimulator simulator(
      scenario.node, scenario.scheduler, [&] { return make_policy(scenario.policy); },
      *scenario.cluster, scenario.seed, *source, simulation_options_of(scenario));
  return simulator.run();
}

inline SimulationResult simulate_scenario(const Scenario& scenario) {
  std::unique_ptr<RequestSource> source = make_request_source(scenario);
  return simulate_scenario(scenario, *source);
}

// examples/peak-mixed.yaml, the scenario most simulation tests start from.
inline Scenario peak_mixed_scenario() {
  return load_scenario(std::string(GANGWAY_SOURCE_DIR) + "/examples/peak-mixed.yaml");
}

// peak-mixed.yaml measured for `duration` after `warmup`, with `drain_limit` for what is in
// flight at the end, its traffic times `rate_scale`.
inline Scenario peak_mixed_scenario(Duration warmup, Duration duration, Duration drain_limit,
                                    double rate_scale = 1.0) {
  Scenario scenario = peak_mixed_scenario();
  scenario.warmup = warmup;
  scenario.duration = duration;
  scenario.drain_limit = drain_limit;
  for (StreamSpec& stream : scenario.streams) stream.arrival.rate_scale *= rate_scale;
  return scenario;
}

// examples/peak-mixed.yaml's capacity per tier, each tier alone (docs/capacity.md).
inline constexpr double kPeakSmallCapacityPerS = 1527;
inline constexpr double kPeakLargeCapacityPerS = 103;

// Scales the streams so that the small models together offer `small_per_s` requests a second and
// the large model `large_per_s`, keeping the scenario's split between classes.
inline void set_tier_rates(Scenario& scenario, double small_per_s, double large_per_s) {
  double small_total = 0;
  double large_total = 0;
  for (const StreamSpec& stream : scenario.streams) {
    (scenario.node.model(stream.model).is_large() ? large_total : small_total) +=
        stream.arrival.rate_per_s;
  }
  for (StreamSpec& stream : scenario.streams) {
    const bool large = scenario.node.model(stream.model).is_large();
    stream.arrival.rate_per_s *= large ? large_per_s / large_total : small_per_s / small_total;
  }
}

// examples/peak-mixed.yaml with the large model offered `large_load` times its capacity beside a
// trickle of small requests, measured from the start: the overloaded gang the stall regressions
// need.
inline Scenario large_model_overload(uint64_t seed, Duration duration, double large_load) {
  Scenario scenario = peak_mixed_scenario();
  scenario.seed = seed;
  scenario.warmup = Duration(0);
  scenario.duration = duration;
  set_tier_rates(scenario, 0.5, large_load * kPeakLargeCapacityPerS);
  return scenario;
}

// A fault of a random kind on a random one of `gpus` GPUs, starting within `window`: a lost GPU
// (back after 0.1-2.1 s, or never for three in ten), iterations 1.5-5.5 times as long, or a stalled
// engine.
inline FaultSpec random_fault(Rng& rng, Duration window, int gpus = 8) {
  FaultSpec fault;
  const uint64_t kind = rng.next_u64() % 3;
  fault.kind = kind == 0   ? FaultKind::kGpuLoss
               : kind == 1 ? FaultKind::kOverrun
                           : FaultKind::kStall;
  fault.gpu = GpuId(static_cast<uint16_t>(rng.next_u64() % static_cast<uint64_t>(gpus)));
  fault.at = Time::zero() + seconds_to_duration(rng.uniform01() * to_seconds(window));
  fault.duration = seconds_to_duration(0.1 + rng.uniform01() * 2);
  if (fault.kind == FaultKind::kOverrun) fault.factor = 1.5 + rng.uniform01() * 4;
  if (fault.kind == FaultKind::kGpuLoss && rng.uniform01() < 0.3) fault.duration.reset();
  return fault;
}

// Nothing left in flight, and every request that arrived ended with exactly one outcome.
inline void expect_every_request_ended_once(const RunMetrics& metrics) {
  EXPECT_EQ(metrics.in_flight(), 0);
  EXPECT_EQ(metrics.arrivals(), metrics.finished());
  const RequestStats& total = metrics.total();
  EXPECT_EQ(total.arrived(),
            total.completed() + total.rejected() + total.failed() + total.cancelled());
}

inline void expect_every_request_ended_once(const SimulationResult& result) {
  expect_every_request_ended_once(result.metrics);
}

// What the stall regressions check: no request was left live until the drain limit cancelled
// it, and every request ended once.
inline void expect_no_request_stranded(const SimulationResult& result) {
  EXPECT_EQ(result.metrics.total().cancelled(), 0u);
  expect_every_request_ended_once(result);
}

}  // namespace gangway
