#include "config/scheduler_config.h"

#include "config/scenario.h"
#include "model/cost_model.h"
#include "sched/policy_registry.h"
#include "sched/router_registry.h"

namespace gangway {
namespace {

// Durations are written in milliseconds.
void read_duration_ms(const YamlMap& map, const char* key, bool zero_allowed, Duration& field) {
  if (const auto v = map.get(key)) {
    field = ms_to_duration(zero_allowed ? v->non_negative_number() : v->positive_number());
  }
}

void read_policy_parameters(const YamlMap& map, PolicySpec& spec) {
  // time-slice
  read_duration_ms(map, "slice_period_ms", false, spec.slice_period);
  if (const auto v = map.get("slice_large_share")) {
    spec.slice_large_share = v->number_in(0.0, 1.0, true, true);
  }
  // gangway
  if (const auto v = map.get("mode")) {
    spec.mode = v->choice({"lease", "exclusive"}) == "lease" ? ExecutionMode::kLease
                                                             : ExecutionMode::kExclusive;
  }
  if (const auto v = map.get("large_weight")) spec.large_weight = v->positive_number();
  if (const auto v = map.get("small_weight")) spec.small_weight = v->positive_number();
  if (const auto v = map.get("split")) {
    spec.split =
        v->choice({"weights", "demand"}) == "weights" ? TierSplit::kWeights : TierSplit::kDemand;
  }
  if (const auto v = map.get("large_share_min")) {
    spec.large_share_min = v->number_in(0.0, 1.0, false, false);
  }
  if (const auto v = map.get("large_share_max")) {
    spec.large_share_max = v->number_in(0.0, 1.0, false, false);
  }
  if (spec.large_share_max < spec.large_share_min) {
    const YamlValue where =
        map.get("large_share_max").value_or(map.get("large_share_min").value_or(map.self()));
    where.fail("expected large_share_max >= large_share_min (" +
               format_number(spec.large_share_min) + "), got " +
               format_number(spec.large_share_max));
  }
  if (const auto v = map.get("pace_reserve")) {
    spec.pace_reserve = v->boolean();
    if (spec.pace_reserve && spec.mode == ExecutionMode::kExclusive) {
      v->fail("is read only in lease mode (mode: lease)");
    }
  }
  read_duration_ms(map, "lease_min_ms", false, spec.lease_min);
  read_duration_ms(map, "lease_max_ms", false, spec.lease_max);
  if (spec.lease_max < spec.lease_min) {
    const YamlValue where =
        map.get("lease_max_ms").value_or(map.get("lease_min_ms").value_or(map.self()));
    where.fail("expected lease_max_ms >= lease_min_ms (" + format_number(to_ms(spec.lease_min)) +
               " ms), got " + format_number(to_ms(spec.lease_max)) + " ms");
  }
  read_duration_ms(map, "max_large_wait_ms", false, spec.max_large_wait);
  read_duration_ms(map, "batching_delay_ms", true, spec.batching_delay);
  read_duration_ms(map, "urgency_margin_ms", true, spec.urgency_margin);
  if (const auto v = map.get("conservative_backfill")) spec.conservative_backfill = v->boolean();
  read_duration_ms(map, "overrun_grace_ms", true, spec.overrun_grace);
  read_duration_ms(map, "exclusive_max_large_wait_ms", false, spec.exclusive_max_large_wait);
  read_duration_ms(map, "exclusive_phase_max_ms", false, spec.exclusive_phase_max);
}

const std::vector<std::string>& scheduler_keys() {
  static const std::vector<std::string> keys = {"large_kv_fraction",
                                                "kv_admission_watermark",
                                                "routing",
                                                "kv_split",
                                                "large_kv_fraction_min",
                                                "large_kv_fraction_max",
                                                "kv_rebalance_step",
                                                "kv_rebalance_interval_ms",
                                                "prefix_caching",
                                                "host_prefix_cache",
                                                "lm_cache_aware_batching",
                                                "preemption",
                                                "oracle_output_lengths"};
  return keys;
}

const std::vector<std::string>& policy_keys() {
  static const std::vector<std::string> keys = {"name",
                                                "slice_period_ms",
                                                "slice_large_share",
                                                "mode",
                                                "large_weight",
                                                "small_weight",
                                                "split",
                                                "large_share_min",
                                                "large_share_max",
                                                "pace_reserve",
                                                "lease_min_ms",
                                                "lease_max_ms",
                                                "max_large_wait_ms",
                                                "batching_delay_ms",
                                                "urgency_margin_ms",
                                                "conservative_backfill",
                                                "overrun_grace_ms",
                                                "exclusive_max_large_wait_ms",
                                                "exclusive_phase_max_ms"};
  return keys;
}

}  // namespace

SchedulerOptions read_scheduler_options(const YamlValue& value) {
  const YamlMap map = value.map(scheduler_keys());
  SchedulerOptions options;
  if (const auto v = map.get("large_kv_fraction")) {
    options.large_kv_fraction = v->number_in(0.0, 1.0, true, true);
  }
  if (const auto v = map.get("kv_admission_watermark")) {
    options.kv_admission_watermark = v->number_in(0.0, 1.0, false, true);
  }
  if (const auto v = map.get("routing")) {
    options.routing = v->text();
    if (!is_router_name(options.routing)) {
      v->fail("unknown routing rule " + in_quotes(options.routing) +
              "; expected one of: " + join_names(router_names()));
    }
  }
  if (const auto v = map.get("kv_split")) {
    options.kv_split =
        v->choice({"static", "dynamic"}) == "dynamic" ? KvSplit::kDynamic : KvSplit::kStatic;
  }
  const bool dynamic = options.kv_split == KvSplit::kDynamic;
  for (const char* key : {"large_kv_fraction_min", "large_kv_fraction_max", "kv_rebalance_step",
                          "kv_rebalance_interval_ms"}) {
    if (const auto v = map.get(key); v && !dynamic) {
      v->fail(std::string("is read only with kv_split: dynamic"));
    }
  }
  if (const auto v = map.get("large_kv_fraction_min")) {
    options.large_kv_fraction_min = v->number_in(0.0, 1.0, true, true);
  }
  if (const auto v = map.get("large_kv_fraction_max")) {
    options.large_kv_fraction_max = v->number_in(0.0, 1.0, true, true);
  }
  if (dynamic && !(options.large_kv_fraction_min <= options.large_kv_fraction &&
                   options.large_kv_fraction <= options.large_kv_fraction_max)) {
    const YamlValue where =
        map.get("large_kv_fraction")
            .value_or(map.get("large_kv_fraction_min")
                          .value_or(map.get("large_kv_fraction_max").value_or(map.self())));
    where.fail("expected large_kv_fraction_min (" + format_number(options.large_kv_fraction_min) +
               ") <= large_kv_fraction (" + format_number(options.large_kv_fraction) +
               ") <= large_kv_fraction_max (" + format_number(options.large_kv_fraction_max) + ")");
  }
  if (const auto v = map.get("kv_rebalance_step")) {
    options.kv_rebalance_step = v->number_in(0.0, 1.0, true, false);
  }
  if (const auto v = map.get("kv_rebalance_interval_ms")) {
    options.kv_rebalance_interval = ms_to_duration(v->non_negative_number());
  }
  if (const auto v = map.get("prefix_caching")) options.prefix_caching = v->boolean();
  if (const auto v = map.get("host_prefix_cache")) options.host_prefix_cache = v->boolean();
  if (const auto v = map.get("lm_cache_aware_batching")) {
    options.lm_cache_aware_batching = v->boolean();
  }
  if (const auto v = map.get("oracle_output_lengths")) {
    options.oracle_predictor = v->boolean();
  }
  if (const auto v = map.get("preemption")) {
    const std::string mode = v->choice({"cost", "pause", "swap", "recompute"});
    options.preemption = mode == "pause"       ? PreemptionPolicy::kPause
                         : mode == "swap"      ? PreemptionPolicy::kSwap
                         : mode == "recompute" ? PreemptionPolicy::kRecompute
                                               : PreemptionPolicy::kCost;
  }
  return options;
}

void check_scheduler_against_node(const YamlValue& scheduler, const SchedulerOptions& options,
                                  const NodeSpec& node) {
  if (options.preemption == PreemptionPolicy::kSwap && node.host_memory_bytes <= 0) {
    const YamlMap map = scheduler.map(scheduler_keys());
    map.get("preemption")
        ->fail(
            "swap needs host memory to swap to, but node.host_memory_gib is 0; give the node host "
            "memory or choose preemption: cost (which never swaps without room) or recompute");
  }
}

void check_policy_against_node(const YamlValue& policy, const PolicySpec& spec,
                               const NodeSpec& node) {
  // Only horizons the scenario writes are checked (the defaults hold several iterations).
  const ModelSpec* large = node.large_model();
  if (large == nullptr || !policy.is_map()) return;
  const std::unique_ptr<CostModel> cost = make_cost_model(*large, node.hardware);
  // The shortest iteration the gang can run.
  const Duration iteration = lone_decode_step(*cost);
  const YamlMap map = policy.map(policy_keys());
  const auto check = [&](const char* key, Duration horizon, const std::string& what) {
    const std::optional<YamlValue> written = map.get(key);
    if (!written || horizon >= iteration) return;
    written->fail("expected " + what + " to hold at least one large-model iteration (" +
                  format_number(to_ms(iteration)) + " ms, one decode step of " + large->name +
                  " on this node), got " + format_number(to_ms(horizon)) + " ms");
  };
  check("lease_max_ms", spec.lease_max, "the lease horizon");
  check("lease_min_ms", spec.lease_min, "the shortest lease");
  check("exclusive_phase_max_ms", spec.exclusive_phase_max, "an exclusive phase");
  if (spec.name == "time-slice") {
    check(map.has("slice_large_share") ? "slice_large_share" : "slice_period_ms",
          std::chrono::duration_cast<Duration>(spec.slice_period * spec.slice_large_share),
          "time-slice's large-model window (slice_period_ms x slice_large_share)");
  }
}

PolicySpec read_policy(const YamlValue& value) {
  PolicySpec spec = default_policy_spec();
  // Constructed, never assigned: assigning one YamlValue to another assigns the YAML nodes,
  // which in yaml-cpp rewrites the policy section itself.
  std::optional<YamlValue> name;
  if (value.is_scalar()) {
    name.emplace(value);
  } else {
    const YamlMap map = value.map(policy_keys());
    if (const auto written = map.get("name")) name.emplace(*written);
    // Parameters are read whatever the policy, so that the scenario can be run under another
    // policy (--policy) with them; each policy reads the ones it documents.
    read_policy_parameters(map, spec);
  }
  if (name) {
    spec.name = name->text();
    bool known = false;
    for (const std::string& policy : policy_names()) known = known || policy == spec.name;
    if (!known) {
      name->fail("unknown policy " + in_quotes(spec.name) +
                 "; expected one of: " + join_names(policy_names()));
    }
  }
  // The registry's own checks name the key ("policy.slice_period_ms") but not the file.
  value.document().run_located([&] { validate_policy_spec(spec); });
  return spec;
}

}  // namespace gangway
