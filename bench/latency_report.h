// How the decision-path benchmarks report per-event times: p50 / p99 / max as counters beside
// Google Benchmark's mean, and the per-event floor of a replayed event sequence.
//
// The floor: a benchmark whose events are deterministic (a fresh, loaded node replays the same
// events every time) runs them on several fresh nodes and keeps each event's fastest time. The
// replays differ only by what the machine did meanwhile (interrupts, neighbours, the other
// core's load); that only adds time, so the per-event minimum is what the event costs
// undisturbed, a figure a noisy shared machine can still give. It removes interruptions, not a
// host that stays slow through every replay: compare p50 floors between runs before comparing
// their tails.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

namespace gangway {

// The q-quantile of sorted, non-empty samples.
inline double quantile_of_sorted(const std::vector<double>& sorted, double q) {
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()))];
}

// Sorts the samples (ns) and sets p50_us, p99_us and max_us.
inline void report_latency(benchmark::State& state, std::vector<double>& samples_ns) {
  std::sort(samples_ns.begin(), samples_ns.end());
  state.counters["p50_us"] = quantile_of_sorted(samples_ns, 0.50) / 1e3;
  state.counters["p99_us"] = quantile_of_sorted(samples_ns, 0.99) / 1e3;
  state.counters["max_us"] = samples_ns.back() / 1e3;
}

struct EventFloor {
  std::vector<double> floor_ns;   // each event's fastest time over the replays
  std::vector<int> new_prefills;  // sequences each event started prefilling (same every replay)
  std::vector<double> first_ns;   // the first replay's times: the disturbed distribution
};

// Runs `replays` replays; `replay_once(ns, new_prefills)` sets up a fresh node, runs the events
// and appends each timed event's time and prefill count. Empty if two replays timed different
// events (the sequence is not deterministic, and minima of unlike events would mean nothing).
template <typename ReplayOnce>
std::optional<EventFloor> measure_floor(int replays, ReplayOnce replay_once) {
  EventFloor result;
  std::vector<double> ns;
  std::vector<int> prefills;
  for (int r = 0; r < replays; ++r) {
    ns.clear();
    prefills.clear();
    replay_once(ns, prefills);
    if (r == 0) {
      result.floor_ns = ns;
      result.first_ns = ns;
      result.new_prefills = prefills;
      continue;
    }
    if (prefills != result.new_prefills) return std::nullopt;
    for (size_t i = 0; i < ns.size(); ++i) {
      result.floor_ns[i] = std::min(result.floor_ns[i], ns[i]);
    }
  }
  return result;
}

// Counters of a floor: p50 / p99 / max of the floors; steady_p99_us, the p99 after the first
// `warmup_events` (a setup that starts its batches together makes its first events unusual);
// us_per_new_prefill and base_us, a least-squares fit of the floor against the prefills each
// event started (what one admission costs); first_replay_p99_us; events. The iteration time
// (manual) is the mean floor.
inline void report_floor(benchmark::State& state, EventFloor& floor, size_t warmup_events) {
  if (floor.floor_ns.size() <= warmup_events) {
    state.SkipWithError("too few timed events after the warm-up");
    return;
  }
  double sum_x = 0, sum_y = 0, sum_xx = 0, sum_xy = 0;
  for (size_t i = 0; i < floor.floor_ns.size(); ++i) {
    const double x = floor.new_prefills[i];
    const double y = floor.floor_ns[i] / 1e3;
    sum_x += x;
    sum_y += y;
    sum_xx += x * x;
    sum_xy += x * y;
  }
  const auto n = static_cast<double>(floor.floor_ns.size());
  const double spread = n * sum_xx - sum_x * sum_x;
  const double slope = spread > 0 ? (n * sum_xy - sum_x * sum_y) / spread : 0.0;
  state.counters["us_per_new_prefill"] = slope;
  state.counters["base_us"] = (sum_y - slope * sum_x) / n;
  state.counters["max_new_prefills"] =
      *std::max_element(floor.new_prefills.begin(), floor.new_prefills.end());
  state.counters["events"] = n;
  state.SetIterationTime(sum_y / 1e6 / n);
  std::vector<double> steady(floor.floor_ns.begin() + static_cast<std::ptrdiff_t>(warmup_events),
                             floor.floor_ns.end());
  std::sort(steady.begin(), steady.end());
  state.counters["steady_p99_us"] = quantile_of_sorted(steady, 0.99) / 1e3;
  std::sort(floor.first_ns.begin(), floor.first_ns.end());
  state.counters["first_replay_p99_us"] = quantile_of_sorted(floor.first_ns, 0.99) / 1e3;
  report_latency(state, floor.floor_ns);
}

// Steps a plain iteration-done benchmark runs before it starts timing. A process's first pass
// through these events touches fresh memory (page faults inside the timed calls tripled the p99
// of a first run against a later one in the same process), and its first events fill the
// batches; a serving daemon is past both.
inline constexpr int kUntimedSteps = 20000;

// The body of a plain iteration-done benchmark: kUntimedSteps steps of `replay` (an
// IterationDoneReplay, timed_event.h), then one step per benchmark iteration. Counters: p50 /
// p99 / max of the timed events, mean_batch (entries per launched batch) and live_requests at
// the end (the backlog held).
template <typename Replay>
void run_timed(benchmark::State& state, Replay& replay) {
  for (int step = 0; step < kUntimedSteps; ++step) replay.next();
  std::vector<double> samples;
  samples.reserve(1 << 20);
  double batch_entries = 0;
  for (auto _ : state) {
    const double ns = replay.next();
    if (ns < 0) continue;
    samples.push_back(ns);
    batch_entries += static_cast<double>(replay.entries);
  }
  if (samples.empty()) {
    state.SkipWithError("no event was timed");
    return;
  }
  state.counters["mean_batch"] = batch_entries / static_cast<double>(samples.size());
  state.counters["live_requests"] = static_cast<double>(replay.node.scheduler->live_requests());
  report_latency(state, samples);
}

// The body of a floor benchmark: `with_fresh_replay(run)` sets up a fresh, loaded node and its
// replay (next(): the timed event's ns, negative when the step timed nothing; new_prefills: what
// that event started prefilling) and calls run(replay), which takes `steps` steps. Nine replays;
// the first `warmup_events` are left out of steady_p99_us.
template <typename WithFreshReplay>
void run_floor(benchmark::State& state, WithFreshReplay with_fresh_replay, int steps,
               size_t warmup_events) {
  std::optional<EventFloor> floor =
      measure_floor(9, [&](std::vector<double>& ns, std::vector<int>& new_prefills) {
        with_fresh_replay([&](auto& replay) {
          for (int step = 0; step < steps; ++step) {
            const double t = replay.next();
            if (t < 0) continue;
            ns.push_back(t);
            new_prefills.push_back(replay.new_prefills);
          }
        });
      });
  if (!floor) {
    state.SkipWithError("replays differ in their events: the replay is not deterministic");
    return;
  }
  report_floor(state, *floor, warmup_events);
}

}  // namespace gangway
