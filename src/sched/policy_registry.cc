#include "sched/policy_registry.h"

#include <functional>
#include <utility>

#include "core/input_error.h"
#include "sched/policies/policy_factories.h"

namespace gangway {

namespace {

using Factory = std::unique_ptr<GangPolicy> (*)(const PolicySpec&);

const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> entries = {
      {"fcfs", &make_fcfs_policy},
      {"sm-first", &make_sm_first_policy},
      {"lm-first", &make_lm_first_policy},
      {"time-slice", &make_time_slice_policy},
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

void validate_policy_spec(const PolicySpec& spec) {
  bool known = false;
  for (const auto& entry : registry()) known = known || entry.first == spec.name;
  if (!known) {
    throw InputError::at("", std::nullopt, "policy",
                         "unknown policy '" + spec.name + "'; expected one of: " + joined_names());
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
