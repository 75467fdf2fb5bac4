// The timed scheduler events of the decision-path benchmarks (an iteration done, an arrival), and
// the loops that drive them: steady_clock around the call (a driver may read clocks; the
// scheduler may not). Kept out of line so that callgrind can count exactly the timed events'
// instructions, which repeat run to
// run where wall time does not: `valgrind --tool=callgrind
// --toggle-collect='*timed_iteration_done*' gangway_bench ...` (the full command in
// bench/README.md).
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "latency_report.h"
#include "sched/scheduler.h"

namespace gangway {

// Completes the batch in flight on `gpu` and builds the next; returns the wall time it took, ns.
[[gnu::noinline]] inline double timed_iteration_done(Scheduler& scheduler, GpuId gpu, Time now) {
  const auto start = std::chrono::steady_clock::now();
  scheduler.on_iteration_done(EngineRef::small(gpu), {}, now);
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(end - start).count();
}

// Submits `request` and sets `result`; returns the wall time it took, ns.
[[gnu::noinline]] inline double timed_submit(Scheduler& scheduler, const RequestSpec& request,
                                             Time now, SubmitResult& result) {
  const auto start = std::chrono::steady_clock::now();
  result = scheduler.submit(request, now);
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(end - start).count();
}

// The body of an arrival benchmark: each benchmark iteration submits `next_request()` to the
// loaded node (timed), then cancels it if it was admitted, so that the queue stays as the load
// left it. Counters: p50 / p99 / max of the timed arrivals. Returns the fraction rejected.
template <typename Node, typename NextRequest>
double run_arrivals(benchmark::State& state, Node& node, NextRequest next_request) {
  std::vector<double> samples;
  samples.reserve(1 << 20);
  int64_t rejected = 0;
  for (auto _ : state) {
    const RequestSpec request = next_request();
    SubmitResult result;
    samples.push_back(timed_submit(*node.scheduler, request, node.now, result));
    node.scheduler->effects().clear();
    if (result.accepted) {
      node.scheduler->cancel(request.id, node.now);
      node.scheduler->effects().clear();
    } else {
      ++rejected;
    }
  }
  const double rejected_fraction =
      static_cast<double>(rejected) / static_cast<double>(samples.size());
  report_latency(state, samples);
  return rejected_fraction;
}

// Untimed setup: 10 ms later, completes the batch in flight on every busy GPU (building the
// next ones), and drops the effects.
inline void complete_busy_iterations(Scheduler& scheduler, Time& now) {
  now += std::chrono::milliseconds(10);
  for (size_t g = 0; g < scheduler.state().gpus.size(); ++g) {
    if (scheduler.state().gpus[g].small_busy) {
      scheduler.on_iteration_done(EngineRef::small(GpuId(static_cast<uint16_t>(g))), {}, now);
    }
  }
  scheduler.effects().clear();
}

// Drives the iteration-done benchmarks' events. Every step, arrivals (node.next_arrival()) top
// the node's live requests back up to what its load left (10k queued besides the running
// batches: an iteration ends a few sequences, so one arrival per step let the queue drain within
// the first few thousand steps); then, when the next GPU in turn is busy, its iteration
// completes and the next batch is built. Deterministic: every fresh, loaded node replays the
// same events, which is what lets a floor benchmark line replays up event by event.
template <typename Node>
struct IterationDoneReplay {
  Node& node;
  int64_t backlog = node.scheduler->live_requests();
  size_t gpu = 0;
  // What the last timed event launched: the sequences it started prefilling (its admissions,
  // mostly: the per-event work grows with them) and the batch's entries.
  int new_prefills = 0;
  size_t entries = 0;

  // Runs one step; returns the timed event's wall time (ns), or a negative value when the GPU in
  // turn was idle and nothing was timed.
  double next() {
    node.now += std::chrono::microseconds(1250);
    while (node.scheduler->live_requests() < backlog) {
      node.scheduler->submit(node.next_arrival(), node.now);
    }
    node.scheduler->effects().clear();
    const size_t turn = gpu;
    gpu = (gpu + 1) % node.scheduler->state().gpus.size();
    if (!node.scheduler->state().gpus[turn].small_busy) return -1.0;
    const double ns =
        timed_iteration_done(*node.scheduler, GpuId(static_cast<uint16_t>(turn)), node.now);
    new_prefills = 0;
    entries = 0;
    for (const IterationLaunch& launch : node.scheduler->effects().launches) {
      new_prefills += launch.shape.prefill_seqs;
      entries += launch.entries.size();
    }
    node.scheduler->effects().clear();
    return ns;
  }
};

}  // namespace gangway
