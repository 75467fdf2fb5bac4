// The decision path with full prefix indexes: 8 GPUs whose small-model prefix caches each hold
// about 10,000 cached prompts (64 shared system prompts plus a unique tail each), every GPU busy
// and 10,000 requests queued, every one of them with a prefix some GPU holds. An arrival is
// routed by predicted TTFT (a prefix lookup and a TTFT estimate on each of the 8 replicas); an
// iteration's completion admits requests with prefix hits (references taken, blocks published,
// cached blocks evicted). The target: p99 under 10 us per event. Admission control is
// off, as in decision_bench.cc: with it, a 10k-deep queue turns most arrivals away (the
// rejection path has its own benchmark there), and the backlog would not form.
//
// Times each event on its own (steady_clock around the call; a driver may read clocks) and
// reports p50, p99 and max besides Google Benchmark's mean, like decision_bench.cc.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "core/mix64.h"
#include "core/node_spec.h"
#include "latency_report.h"
#include "output_lengths.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "timed_event.h"

namespace gangway {
namespace {

constexpr int kGpus = 8;
constexpr int kPrefixesPerGpu = 10000;
constexpr int kGroups = 64;
constexpr int kGroupBlocks = 8;  // a 128-token system prompt
constexpr int kTailBlocks = 1;   // each prompt's own 16 tokens
constexpr int kQueued = 10000;

// Chained hashes of group g's system prompt followed by prompt `tail`'s own blocks.
std::vector<BlockHash> prompt_hashes(uint64_t group, uint64_t tail, int tail_blocks) {
  std::vector<BlockHash> hashes;
  uint64_t previous = 0x6a09e667f3bcc908ULL;
  for (int i = 0; i < kGroupBlocks; ++i) {
    previous = mix64(previous ^ mix64(group * 131 + static_cast<uint64_t>(i)));
    hashes.push_back(previous);
  }
  for (int i = 0; i < tail_blocks; ++i) {
    previous = mix64(previous ^ mix64((tail + 1) * 7919 + static_cast<uint64_t>(i)));
    hashes.push_back(previous);
  }
  return hashes;
}

struct Node {
  NodeSpec spec = default_node_spec();
  std::unique_ptr<Scheduler> scheduler;
  uint64_t next_id = 0;
  uint64_t next_tail = 0;
  uint64_t arrivals = 0;  // the iteration-done benchmarks' arrivals so far
  Time now;

  explicit Node(const std::string& routing) {
    spec.hardware = h200_sxm_141gb();  // ~25k blocks per GPU for the small model
    PolicySpec policy;
    policy.name = "gangway";
    SchedulerOptions options;
    options.routing = routing;
    options.admission.enabled = false;
    options.admission.queue_cap = 1'000'000;
    scheduler = std::make_unique<Scheduler>(spec, options, make_policy(policy), nullptr);
  }

  // A request for prompt `tail`; `max_tokens` 0 picks a spread output length.
  RequestSpec request(uint64_t tail, int tail_blocks, int max_tokens = 0) {
    RequestSpec r;
    r.id = RequestId(next_id++);
    r.model = ModelId(0);
    r.slo_class = SloClassId(next_id % 3);
    r.arrival = now;
    const std::vector<BlockHash> hashes = prompt_hashes(tail % kGroups, tail, tail_blocks);
    r.prompt_tokens = static_cast<int32_t>(hashes.size()) * 16 + 1;
    r.prefix_blocks = hashes;
    r.max_tokens = max_tokens > 0 ? max_tokens : spread_output_tokens(r.id.value());
    return r;
  }

  void complete_all() { complete_busy_iterations(*scheduler, now); }

  // Runs 80k one-token prompts through the node so that each GPU's index holds ~10k of them
  // (late binding spreads the fresh prompts), then fills every GPU with running batches and
  // queues 10k requests whose prompts are cached somewhere.
  void load() {
    for (int i = 0; i < kGpus * kPrefixesPerGpu; ++i) {
      scheduler->submit(request(next_tail++, kTailBlocks, 1), now);
      scheduler->effects().clear();
      if (i % 64 == 63) complete_all();
    }
    while (scheduler->live_requests() > 0) complete_all();
    for (int i = 0; i < kGpus * 48; ++i) scheduler->submit(request(next_tail++, 4), now);
    for (int round = 0; round < 4; ++round) complete_all();
    for (int i = 0; i < kQueued; ++i) {
      scheduler->submit(request(static_cast<uint64_t>(i) * 7 % next_tail, kTailBlocks), now);
    }
    scheduler->effects().clear();
  }

  // The iteration-done benchmarks' arrivals: prompts spread over everything cached.
  RequestSpec next_arrival() { return request((arrivals++ * 104729) % next_tail, kTailBlocks); }

  int64_t cached_blocks() const {
    int64_t blocks = 0;
    for (const Replica& replica : scheduler->state().replicas) {
      blocks += replica.kv.indexed_blocks();
    }
    return blocks;
  }
};

const char* routing_of(int64_t arg) {
  return arg == 0 ? "predicted-ttft" : "sglang";
}

// A request whose prefix is cached on some GPU arrives: routed (8 lookups and estimates) and
// queued, decision pass included.
void BM_ArrivalWithFullPrefixIndexes(benchmark::State& state) {
  Node node(routing_of(state.range(0)));
  node.load();
  state.counters["indexed_blocks_per_gpu"] = static_cast<double>(node.cached_blocks()) / kGpus;
  uint64_t i = 0;
  run_arrivals(state, node,
               [&] { return node.request((i++ * 104729) % node.next_tail, kTailBlocks); });
}
BENCHMARK(BM_ArrivalWithFullPrefixIndexes)
    ->Arg(0)
    ->Arg(1)
    ->Iterations(50000)
    ->Unit(benchmark::kMicrosecond);

// An iteration finishes on one GPU: its batch completes (prefill chunks publish their blocks) and
// the next one is built, admitting queued requests with prefix hits and evicting cached blocks
// for their fresh ones.
void BM_IterationDoneWithFullPrefixIndexes(benchmark::State& state) {
  Node node(routing_of(state.range(0)));
  node.load();
  IterationDoneReplay<Node> replay{node};
  run_timed(state, replay);
  state.counters["indexed_blocks_per_gpu"] = static_cast<double>(node.cached_blocks()) / kGpus;
}
BENCHMARK(BM_IterationDoneWithFullPrefixIndexes)
    ->Arg(0)
    ->Arg(1)
    ->Iterations(20000)
    ->Unit(benchmark::kMicrosecond);

// The same 20,000 steps replayed on nine fresh Nodes, each event's fastest time kept
// (latency_report.h: the floor, what an event costs undisturbed); the plain benchmark above
// reports the disturbed distribution. The first event on each GPU fills its batch from the queue
// (up to ~200 admissions); steady_p99_us leaves out the first 2,000 events.
void BM_IterationDoneFloorWithFullPrefixIndexes(benchmark::State& state) {
  for (auto _ : state) {
    run_floor(
        state,
        [&](auto run) {
          Node node(routing_of(state.range(0)));
          node.load();
          IterationDoneReplay<Node> replay{node};
          run(replay);
        },
        20000, 2000);
  }
}
BENCHMARK(BM_IterationDoneFloorWithFullPrefixIndexes)
    ->Arg(0)
    ->Arg(1)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gangway
