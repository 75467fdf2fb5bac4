#include "sched/policy_registry.h"

#include <functional>
#include <utility>

#include "core/input_error.h"
#include "sched/policies/policy_factories.h"

namespace gangway {

namespace {

using Factory = std::unique_ptr<GangPolicy> (*)(const PolicySpec&);

// The aliases that fix gangway's mode (gangway_mode()), so both modes can run side by side in
// one comparison.
std::unique_ptr<GangPolicy> make_gangway_alias_policy(const PolicySpec& spec) {
  PolicySpec fixed = spec;
  fixed.mode = *gangway_mode(spec);
  return make_gangway_policy(fixed);
}

const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> entries = {
      {"fcfs", &make_fcfs_policy},
      {"sm-first", &make_sm_first_policy},
      {"lm-first", &make_lm_first_policy},
      {"time-slice", &make_time_slice_policy},
      {"easy-backfill", &make_easy_backfill_policy},
      {"gangway", &make_gangway_policy},
      {"gangway-lease", &make_gangway_alias_policy},
      {"gangway-exclusive", &make_gangway_alias_policy},
  };
  return entries;
}

std::string joined_names() {
  std::string text;
  for (const std::string& name : policy_names()) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& entry : registry()) out.push_back(entry.first);
    return out;
  }();
  return names;
}

std::optional<ExecutionMode> gangway_mode(const PolicySpec& spec) {
  if (spec.name == "gangway") return spec.mode;
  if (spec.name == "gangway-lease") return ExecutionMode::kLease;
  if (spec.name == "gangway-exclusive") return ExecutionMode::kExclusive;
  return std::nullopt;
}

void validate_policy_spec(const PolicySpec& spec) {
  bool known = false;
  for (const auto& entry : registry()) known = known || entry.first == spec.name;
  if (!known) {
    throw InputError::at("", std::nullopt, "policy",
                         "unknown policy '" + spec.name + "'; expected one of: " + joined_names());
  }
  if (!(spec.large_share_min >= 0.0 && spec.large_share_max <= 1.0 &&
        spec.large_share_min <= spec.large_share_max)) {
    throw InputError::at("", std::nullopt, "policy.large_share_min",
                         "expected 0 <= large_share_min <= large_share_max <= 1");
  }
  if (!(spec.large_weight > 0)) {
    throw InputError::at("", std::nullopt, "policy.large_weight", "expected a weight > 0");
  }
  if (!(spec.small_weight > 0)) {
    throw InputError::at("", std::nullopt, "policy.small_weight", "expected a weight > 0");
  }
  if (spec.lease_min <= Duration(0)) {
    throw InputError::at("", std::nullopt, "policy.lease_min_ms", "expected a value > 0");
  }
  if (spec.lease_max < spec.lease_min) {
    throw InputError::at("", std::nullopt, "policy.lease_max_ms",
                         "expected a value >= policy.lease_min_ms");
  }
  if (spec.max_large_wait <= Duration(0)) {
    throw InputError::at("", std::nullopt, "policy.max_large_wait_ms", "expected a value > 0");
  }
  if (spec.exclusive_max_large_wait <= Duration(0)) {
    throw InputError::at("", std::nullopt, "policy.exclusive_max_large_wait_ms",
                         "expected a value > 0");
  }
  if (spec.exclusive_phase_max <= Duration(0)) {
    throw InputError::at("", std::nullopt, "policy.exclusive_phase_max_ms", "expected a value > 0");
  }
  if (spec.batching_delay < Duration(0) || spec.urgency_margin < Duration(0) ||
      spec.overrun_grace < Duration(0)) {
    throw InputError::at("", std::nullopt, "policy",
                         "batching_delay_ms, urgency_margin_ms and overrun_grace_ms must be >= 0");
  }
  if (spec.name == "time-slice") {
    if (spec.slice_period <= Duration(0)) {
      throw InputError::at("", std::nullopt, "policy.slice_period_ms", "expected a value > 0");
    }
    if (!(spec.slice_large_share > 0.0 && spec.slice_large_share < 1.0)) {
      throw InputError::at("", std::nullopt, "policy.slice_large_share",
                           "expected a fraction strictly between 0 and 1");
    }
  }
}

std::unique_ptr<GangPolicy> make_policy(const PolicySpec& spec) {
  validate_policy_spec(spec);
  for (const auto& entry : registry()) {
    if (entry.first == spec.name) return entry.second(spec);
  }
  return nullptr;  // unreachable: validate_policy_spec rejected unknown names
}

}  // namespace gangway
