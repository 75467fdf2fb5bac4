#include "config/scheduler_config.h"

#include "sched/policy_registry.h"

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
  if (const auto v = map.get("mode")) spec.mode = v->choice({"lease", "exclusive"});
  if (const auto v = map.get("large_weight")) spec.large_weight = v->positive_number();
  if (const auto v = map.get("small_weight")) spec.small_weight = v->positive_number();
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
}

}  // namespace

SchedulerOptions read_scheduler_options(const YamlValue& value) {
  const YamlMap map = value.map({"large_kv_fraction", "kv_admission_watermark"});
  SchedulerOptions options;
  if (const auto v = map.get("large_kv_fraction")) {
    options.large_kv_fraction = v->number_in(0.0, 1.0, true, true);
  }
  if (const auto v = map.get("kv_admission_watermark")) {
    options.kv_admission_watermark = v->number_in(0.0, 1.0, false, true);
  }
  return options;
}

PolicySpec read_policy(const YamlValue& value) {
  PolicySpec spec;
  std::optional<YamlValue> name = value;
  if (!value.is_scalar()) {
    const YamlMap map = value.map({"name", "slice_period_ms", "slice_large_share", "mode",
                                   "large_weight", "small_weight", "lease_min_ms", "lease_max_ms",
                                   "max_large_wait_ms", "batching_delay_ms", "urgency_margin_ms",
                                   "conservative_backfill", "overrun_grace_ms"});
    name = map.get("name");
    // Parameters are read whatever the policy, so that the scenario can be run under another
    // policy (--policy) with them; each policy reads the ones it documents.
    read_policy_parameters(map, spec);
  }
  if (name) {
    spec.name = name->text();
    bool known = false;
    for (const std::string& policy : policy_names()) known = known || policy == spec.name;
    if (!known) {
      name->fail("unknown policy " + quoted(spec.name) +
                 "; expected one of: " + join_names(policy_names()));
    }
  }
  // The registry's own checks name the key ("policy.slice_period_ms") but not the file.
  value.document().run_located([&] { validate_policy_spec(spec); });
  return spec;
}

}  // namespace gangway
