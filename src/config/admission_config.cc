#include "config/admission_config.h"

#include <limits>

namespace gangway {

namespace {

RateLimit read_rate_limit(const YamlValue& value, const ScenarioNames& names) {
  const YamlMap map = value.map({"tenant", "class", "requests_per_s", "tokens_per_s", "burst_s"});
  RateLimit rule;
  if (const auto v = map.get("tenant")) rule.tenant = names.tenant(*v);
  if (const auto v = map.get("class")) rule.slo_class = names.slo_class(*v);
  // A rate of zero would reject everything forever: a typo, not a policy. Leave the key out
  // for "no limit of this kind".
  if (const auto v = map.get("requests_per_s")) rule.requests_per_s = v->positive_number();
  if (const auto v = map.get("tokens_per_s")) rule.tokens_per_s = v->positive_number();
  if (rule.requests_per_s == 0 && rule.tokens_per_s == 0) {
    value.fail("expected requests_per_s or tokens_per_s (a positive rate) in a rate limit");
  }
  if (const auto v = map.get("burst_s")) rule.burst_s = v->positive_number();
  return rule;
}

OverloadLadderSpec read_ladder(const YamlValue& value) {
  const YamlMap map = value.map({"enter", "leave_fraction", "dwell_ms"});
  OverloadLadderSpec spec;
  if (const auto v = map.get("enter")) {
    const std::vector<YamlValue> items = v->list();
    if (items.size() != kOverloadLevels - 1) {
      v->fail("expected " + std::to_string(kOverloadLevels - 1) +
              " pressures (defer_batch, cap_batch_tokens, shed_batch, shed_standard, "
              "shed_interactive), got " +
              std::to_string(items.size()));
    }
    for (size_t i = 0; i < items.size(); ++i) {
      spec.enter[i + 1] = items[i].positive_number();
      if (i > 0 && spec.enter[i + 1] <= spec.enter[i]) {
        items[i].fail("expected increasing pressures, got " + format_number(spec.enter[i + 1]) +
                      " after " + format_number(spec.enter[i]));
      }
    }
  }
  if (const auto v = map.get("leave_fraction")) {
    spec.leave_fraction = v->number_in(0.0, 1.0, true, false);
  }
  if (const auto v = map.get("dwell_ms")) spec.dwell = ms_to_duration(v->non_negative_number());
  return spec;
}

// The ladder's weight shift (docs/overload.md#shifting-weight-between-the-tiers). max_factor is
// bounded so that the large model's share of a contended node stays within the range
// docs/gang-scheduling.md states for it.
WeightShiftSpec read_weight_shift(const YamlValue& value) {
  const YamlMap map =
      value.map({"enabled", "max_factor", "window_ms", "risk_gap", "dwell_ms", "from_rung"});
  WeightShiftSpec spec;
  if (const auto v = map.get("enabled")) spec.enabled = v->boolean();
  if (const auto v = map.get("max_factor")) spec.max_factor = v->number_in(1.0, 16.0, false, false);
  if (const auto v = map.get("window_ms")) spec.window = ms_to_duration(v->positive_number());
  if (const auto v = map.get("risk_gap")) spec.risk_gap = v->number_in(0.0, 1.0, true, false);
  if (const auto v = map.get("dwell_ms")) spec.dwell = ms_to_duration(v->non_negative_number());
  if (const auto v = map.get("from_rung")) {
    const std::string rung = v->choice(
        {"defer_batch", "cap_batch_tokens", "shed_batch", "shed_standard", "shed_interactive"});
    for (int level = 1; level < kOverloadLevels; ++level) {
      if (rung == to_string(static_cast<OverloadLevel>(level))) {
        spec.from_level = static_cast<OverloadLevel>(level);
      }
    }
  }
  return spec;
}

}  // namespace

AdmissionOptions read_admission(const YamlValue& value, const ScenarioNames& names) {
  const YamlMap map = value.map({"enabled", "queue_order", "no_target_deadline_ms", "queue_cap",
                                 "capped_max_tokens", "priority_preemption", "keep_promises",
                                 "rate_limits", "ladder", "weight_shift"});
  AdmissionOptions options;
  if (const auto v = map.get("enabled")) options.enabled = v->boolean();
  if (const auto v = map.get("queue_order")) {
    options.queue_order =
        v->choice({"slack", "arrival"}) == "slack" ? QueueOrder::kSlack : QueueOrder::kArrival;
  }
  if (const auto v = map.get("no_target_deadline_ms")) {
    options.no_target_deadline = ms_to_duration(v->positive_number());
  }
  if (const auto v = map.get("queue_cap")) {
    options.queue_cap = v->integer_in(1, std::numeric_limits<int32_t>::max());
  }
  if (const auto v = map.get("capped_max_tokens")) {
    options.capped_max_tokens = v->int32_at_least(1);
  }
  if (const auto v = map.get("priority_preemption")) options.priority_preemption = v->boolean();
  if (const auto v = map.get("keep_promises")) options.keep_promises = v->boolean();
  if (const auto v = map.get("rate_limits")) {
    for (const YamlValue& item : v->list()) {
      options.rate_limits.push_back(read_rate_limit(item, names));
    }
  }
  if (const auto v = map.get("ladder")) options.ladder = read_ladder(*v);
  if (const auto v = map.get("weight_shift")) options.weight_shift = read_weight_shift(*v);
  return options;
}

std::vector<FaultSpec> read_faults(const YamlValue& value, const NodeSpec& node) {
  std::vector<FaultSpec> faults;
  for (const YamlValue& item : value.list()) {
    const YamlMap map = item.map({"kind", "gpu", "at_s", "duration_s", "factor"});
    FaultSpec fault;
    const YamlValue kind = map.required("kind");
    const std::string name = kind.choice({"gpu_loss", "overrun", "stall"});
    fault.kind = name == "gpu_loss"  ? FaultKind::kGpuLoss
                 : name == "overrun" ? FaultKind::kOverrun
                                     : FaultKind::kStall;
    if (const auto v = map.get("gpu")) {
      fault.gpu = GpuId(static_cast<uint16_t>(v->integer_in(0, node.gpu_count - 1)));
    } else if (fault.kind != FaultKind::kOverrun) {
      item.fail("expected the key 'gpu' (required for kind: " + name + ")");
    }
    fault.at = Time::zero() + seconds_to_duration(map.required("at_s").non_negative_number());
    if (const auto v = map.get("duration_s")) {
      fault.duration = seconds_to_duration(v->positive_number());
    } else if (fault.kind != FaultKind::kGpuLoss) {
      item.fail("expected the key 'duration_s' (required for kind: " + name + ")");
    }
    if (const auto v = map.get("factor")) {
      if (fault.kind != FaultKind::kOverrun) v->fail("is read only with kind: overrun");
      fault.factor = v->number_in(1.0, 1000.0, false, false);
    } else if (fault.kind == FaultKind::kOverrun) {
      item.fail("expected the key 'factor' (required for kind: overrun)");
    }
    faults.push_back(fault);
  }
  return faults;
}

}  // namespace gangway
