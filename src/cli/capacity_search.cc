#include "cli/capacity_search.h"

#include <algorithm>
#include <cmath>

#include "cli/simulation_run.h"
#include "core/input_error.h"

namespace gangway {

const char* to_string(CapacityScope scope) {
  switch (scope) {
    case CapacityScope::kSmall:
      return "small";
    case CapacityScope::kLarge:
      return "large";
    case CapacityScope::kMix:
      return "mix";
  }
  return "?";
}

const char* to_string(CapacityMeasure measure) {
  switch (measure) {
    case CapacityMeasure::kSlo:
      return "slo";
    case CapacityMeasure::kTtft:
      return "ttft";
    case CapacityMeasure::kQueueP99:
      return "queue-p99";
  }
  return "?";
}

const char* to_string(CapacityBound bound) {
  switch (bound) {
    case CapacityBound::kInside:
      return "inside";
    case CapacityBound::kBelowRange:
      return "below_range";
    case CapacityBound::kAboveRange:
      return "above_range";
  }
  return "?";
}

namespace {

bool in_scope(const Scenario& scenario, ModelId model, CapacityScope scope) {
  if (scope == CapacityScope::kMix) return true;
  return scenario.node.model(model).is_large() == (scope == CapacityScope::kLarge);
}

}  // namespace

bool scope_applies(const Scenario& base, CapacityScope scope) {
  if (base.trace) return scope == CapacityScope::kMix;
  return std::any_of(base.streams.begin(), base.streams.end(),
                     [&](const StreamSpec& stream) { return in_scope(base, stream.model, scope); });
}

Scenario probe_scenario(const Scenario& base, CapacityScope scope, double scale, uint64_t seed) {
  if (!scope_applies(base, scope)) {
    throw InputError::at(base.path, std::nullopt, "--search",
                         std::string("the scenario has no ") + to_string(scope) +
                             "-model traffic to scale" +
                             (base.trace ? " (a trace replay is searched as a whole: mix)" : ""));
  }
  Scenario scenario = base;
  scenario.seed = seed;
  if (scenario.trace) {
    scenario.trace->rate_scale *= scale;
    return scenario;
  }
  std::vector<StreamSpec> streams;
  for (const StreamSpec& stream : base.streams) {
    if (!in_scope(base, stream.model, scope)) continue;
    StreamSpec scaled = stream;
    scaled.arrival.rate_scale *= scale;
    streams.push_back(std::move(scaled));
  }
  scenario.streams = std::move(streams);
  return scenario;
}

ProbeResult run_probe(const Scenario& base, const PolicySpec& policy, const std::string& routing,
                      CapacityScope scope, double scale, uint64_t seed,
                      const CapacityCriterion& criterion) {
  const Scenario scenario = probe_scenario(base, scope, scale, seed);
  const PolicyRun run = run_policy(scenario, policy, routing, nullptr);
  const RunMetrics& metrics = run.result.metrics;
  const double window = run.result.measured_s;
  ProbeResult probe;
  probe.scale = scale;
  probe.offered_rps = static_cast<double>(metrics.total().arrived()) / window;
  probe.goodput_rps = static_cast<double>(metrics.total().slo_met()) / window;
  probe.passed = true;
  for (const ModelSpec& model : scenario.node.models) {
    const double rps = static_cast<double>(metrics.model(model.id).arrived()) / window;
    (model.is_large() ? probe.large_rps : probe.small_rps) += rps;
  }
  if (criterion.measure == CapacityMeasure::kQueueP99) {
    const StreamingHistogram& queue = metrics.total().queue_ms();
    const double p99 = queue.count() > 0 ? queue.quantile(0.99) : 0.0;
    probe.passed = p99 < criterion.queue_p99_limit_ms;
    probe.worst = WorstPair{"", "", p99, criterion.queue_p99_limit_ms};
    return probe;
  }
  std::optional<double> worst_margin;
  for (const ModelSpec& model : scenario.node.models) {
    for (const SloClass& slo : scenario.node.slo_classes) {
      const RequestStats& stats = metrics.model_class(model.id, slo.id);
      const double target = criterion.attainment.value_or(slo.attainment_target);
      if (stats.arrived() == 0 || !(target > 0)) continue;
      const uint64_t met =
          criterion.measure == CapacityMeasure::kTtft ? stats.ttft_met() : stats.slo_met();
      const double attainment = static_cast<double>(met) / static_cast<double>(stats.arrived());
      const double margin = attainment - target;
      if (margin < 0) probe.passed = false;
      if (!worst_margin || margin < *worst_margin) {
        worst_margin = margin;
        probe.worst = WorstPair{model.name, slo.name, attainment, target};
      }
    }
  }
  return probe;
}

SeedSearch search_capacity(const Scenario& base, const PolicySpec& policy,
                           const std::string& routing, CapacityScope scope, uint64_t seed,
                           const CapacityCriterion& criterion, const CapacityRange& range,
                           const std::function<void()>& on_probe) {
  SeedSearch search;
  search.seed = seed;
  // The bracket: search.capacity passed, search.first_failure (above it) failed.
  auto probe = [&](double scale) {
    search.probes.push_back(run_probe(base, policy, routing, scope, scale, seed, criterion));
    if (on_probe) on_probe();
    const ProbeResult& result = search.probes.back();
    (result.passed ? search.capacity : search.first_failure) = result;
    return result.passed;
  };
  // From the scenario as written, double or halve until the answer lies between a passing and a
  // failing probe, or the range ends.
  double scale = std::clamp(1.0, range.low, range.high);
  const bool passed_first = probe(scale);
  while (true) {
    if (passed_first) {
      if (scale >= range.high) {
        search.bound = CapacityBound::kAboveRange;
        return search;
      }
      scale = std::min(scale * 2, range.high);
      if (!probe(scale)) break;
    } else {
      if (scale <= range.low) {
        search.bound = CapacityBound::kBelowRange;
        return search;
      }
      scale = std::max(scale / 2, range.low);
      if (probe(scale)) break;
    }
  }
  // Bisect (geometric midpoints) until the bracket is within the tolerance.
  while (search.first_failure->scale / search.capacity->scale > 1 + range.tolerance) {
    probe(std::sqrt(search.capacity->scale * search.first_failure->scale));
  }
  return search;
}

}  // namespace gangway
