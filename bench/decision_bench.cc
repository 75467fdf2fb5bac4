// The scheduler core's decision path: how long one event (an arrival, or an iteration finishing
// on a GPU) takes to process, including the decision pass it triggers, with 8 GPUs busy and
// 10,000 requests queued. The target: p99 under 10 us.
//
// Each benchmark times every event on its own (steady_clock around the call; this is a driver,
// which may read clocks) and reports the p50, p99 and max as counters besides Google
// Benchmark's mean.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/node_spec.h"
#include "latency_report.h"
#include "output_lengths.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "timed_event.h"

namespace gangway {
namespace {

constexpr int kQueued = 10000;

struct Node {
  NodeSpec spec = default_node_spec();
  std::unique_ptr<Scheduler> scheduler;
  uint64_t next_id = 0;
  Time now;

  // Admission control off by default so that the 10k-deep queue the benchmarks want forms.
  explicit Node(const std::string& policy, bool admission = false) {
    PolicySpec policy_spec;
    policy_spec.name = policy;
    SchedulerOptions options;
    options.admission.enabled = admission;
    options.admission.queue_cap = 1'000'000;
    scheduler = std::make_unique<Scheduler>(spec, options, make_policy(policy_spec), nullptr);
  }

  RequestSpec small_request(int prompt) {
    RequestSpec request;
    request.id = RequestId(next_id++);
    request.model = ModelId(0);
    request.slo_class = SloClassId(next_id % 3);
    request.arrival = now;
    request.prompt_tokens = prompt;
    request.max_tokens = spread_output_tokens(request.id.value());
    return request;
  }

  // The iteration-done benchmarks' arrivals.
  RequestSpec next_arrival() { return small_request(128); }

  // Fills every GPU with a running batch, then queues `queued` more requests behind them.
  void load(int queued) {
    for (int i = 0; i < 8 * 48; ++i) scheduler->submit(small_request(64), now);
    // Run a few rounds so batches are in decode, then queue the backlog.
    for (int round = 0; round < 4; ++round) complete_all();
    for (int i = 0; i < queued; ++i) scheduler->submit(small_request(128), now);
    scheduler->effects().clear();
  }

  void complete_all() { complete_busy_iterations(*scheduler, now); }
};

// An iteration finishes on one GPU: its batch is completed and the next one built (decodes of
// the resident sequences, prefill chunks, admissions from a 10k-deep queue).
void BM_IterationDoneWith10kQueued(benchmark::State& state) {
  Node node("gangway");
  node.load(kQueued);
  IterationDoneReplay<Node> replay{node};
  run_timed(state, replay);
}
BENCHMARK(BM_IterationDoneWith10kQueued)->Iterations(20000)->Unit(benchmark::kMicrosecond);

// The same 20,000 steps replayed on nine fresh Nodes, each event's fastest time kept
// (latency_report.h: the floor, what an event costs undisturbed). The first event on each GPU
// fills its batch from the queue; steady_p99_us leaves out the first 2,000 events.
void BM_IterationDoneFloorWith10kQueued(benchmark::State& state) {
  for (auto _ : state) {
    run_floor(
        state,
        [&](auto run) {
          Node node("gangway");
          node.load(kQueued);
          IterationDoneReplay<Node> replay{node};
          run(replay);
        },
        20000, 2000);
  }
}
BENCHMARK(BM_IterationDoneFloorWith10kQueued)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// A request arrives at a node whose GPUs are all busy and whose queue holds 10k requests.
void BM_ArrivalWith10kQueued(benchmark::State& state) {
  Node node(state.range(0) == 0 ? "gangway" : "fcfs");
  node.load(kQueued);
  run_arrivals(state, node, [&] { return node.small_request(128); });
}
BENCHMARK(BM_ArrivalWith10kQueued)
    ->Arg(0)
    ->Arg(1)
    ->Iterations(50000)
    ->Unit(benchmark::kMicrosecond);

// Overload: an interactive request arrives at a node whose queues hold 10k batch requests, far
// more than 200 ms can clear; admission predicts its TTFT on every replica and rejects it. A
// rejection is decided within the scheduling-decision budget (10 us) like any other event.
void BM_RejectionAtOverload(benchmark::State& state) {
  Node node("gangway", /*admission=*/true);
  node.load(kQueued);
  state.counters["rejected_fraction"] = run_arrivals(state, node, [&] {
    RequestSpec request = node.small_request(512);
    request.slo_class = SloClassId(0);  // interactive: 200 ms
    return request;
  });
}
BENCHMARK(BM_RejectionAtOverload)->Iterations(50000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gangway
