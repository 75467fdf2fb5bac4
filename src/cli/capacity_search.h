// `gangway capacity`'s search: the highest load at which every SLO class meets its attainment
// target on every model, found per seed by bracketing and bisection over a multiple of the
// scenario's arrival rates.
//
// A probe simulates the scenario with its streams' rates times `scale` (only one tier's streams
// for a per-tier search) and passes when, for every (model, class) pair with arrivals in the
// measured window and a target above 0, the share of requests that met the class's SLO (or only
// its TTFT target, CapacityMeasure::kTtft) is at least the target: the class's
// `attainment_target` (99 % unless it says otherwise) or the command line's. Rejections at
// admission count as misses, so admission control cannot make a node look faster.
//
// The search starts at scale 1 (the scenario as written), doubles or halves until the answer is
// bracketed or the range's end is reached, then bisects (geometric midpoints) until the bracket
// is within the tolerance. Each seed searches on its own, so the seeds' answers are independent
// samples and their spread gives the confidence interval.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/scenario.h"

namespace gangway {

// What a probe judges: each class's SLO attainment (the default), its TTFT attainment only, or
// (a throughput yardstick, independent of SLOs) the 99th percentile of every request's queueing
// delay against a limit.
enum class CapacityMeasure : uint8_t { kSlo, kTtft, kQueueP99 };
const char* to_string(CapacityMeasure measure);
// Which streams a search scales: one tier's alone (the others are left out) or all together.
enum class CapacityScope : uint8_t { kSmall, kLarge, kMix };
const char* to_string(CapacityScope scope);

struct CapacityCriterion {
  CapacityMeasure measure = CapacityMeasure::kSlo;
  std::optional<double> attainment;  // overrides every class's attainment_target
  double queue_p99_limit_ms = 1000;  // kQueueP99
};

struct CapacityRange {
  double low = 0.01;  // multiples of the scenario's rates
  double high = 100;
  double tolerance = 0.03;  // stop when high / low of the bracket <= 1 + tolerance
};

// What limited a probe most: the (model, class) pair furthest below (or least above) its
// attainment target, or (kQueueP99) the node's queueing delay p99 against its limit.
struct WorstPair {
  std::string model;      // "" for the node as a whole
  std::string slo_class;  // "" for every class
  double attainment = 0;  // or the queueing delay p99, ms
  double target = 0;      // or the limit, ms
};

struct ProbeResult {
  double scale = 0;
  double offered_rps = 0;  // arrivals in the measured window per second
  double small_rps = 0;    // of which to small models
  double large_rps = 0;
  double goodput_rps = 0;
  bool passed = false;
  std::optional<WorstPair> worst;  // absent when no pair was judged
};

enum class CapacityBound : uint8_t { kInside, kBelowRange, kAboveRange };
const char* to_string(CapacityBound bound);

struct SeedSearch {
  uint64_t seed = 0;
  std::vector<ProbeResult> probes;  // in the order run
  CapacityBound bound = CapacityBound::kInside;
  // The highest passing probe (absent below the range).
  std::optional<ProbeResult> capacity;
  // The lowest failing probe (absent above the range): what limits the node past capacity.
  std::optional<ProbeResult> first_failure;
};

// The scenario a probe runs: `base` with only the scope's streams, their rates times `scale`,
// and `seed`. Throws InputError when the scope has no streams (or the workload is a trace and the
// scope is a tier).
Scenario probe_scenario(const Scenario& base, CapacityScope scope, double scale, uint64_t seed);

// Whether `base` has traffic for the scope (a trace replay only for kMix).
bool scope_applies(const Scenario& base, CapacityScope scope);

// Runs one probe.
ProbeResult run_probe(const Scenario& base, const PolicySpec& policy, const std::string& routing,
                      CapacityScope scope, double scale, uint64_t seed,
                      const CapacityCriterion& criterion);

// One seed's search; `on_probe` is told after each probe (for progress).
SeedSearch search_capacity(const Scenario& base, const PolicySpec& policy,
                           const std::string& routing, CapacityScope scope, uint64_t seed,
                           const CapacityCriterion& criterion, const CapacityRange& range,
                           const std::function<void()>& on_probe = {});

}  // namespace gangway
