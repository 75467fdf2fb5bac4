// Builds gang policies by name, so that the CLI's --policy flags and the scenario's `policy:`
// section can pick any of them, and lists the names for help text and error messages.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/gang_policy.h"
#include "sched/policy_spec.h"

namespace gangway {

// Every known policy name, in the order they are documented.
const std::vector<std::string>& policy_names();
// Throws InputError naming the key ("policy.name" or the bad parameter) and the allowed values.
std::unique_ptr<GangPolicy> make_policy(const PolicySpec& spec);
// Throws InputError if the spec's parameters are out of range for its policy.
void validate_policy_spec(const PolicySpec& spec);
// The mode gangway runs in under this spec: `mode` for `gangway`, the fixed one for the
// `gangway-lease` and `gangway-exclusive` aliases; none for the other policies (they read no
// mode). Every check of "is this gangway in lease mode" goes through here, so that an alias is
// never told apart from its spelled-out form.
std::optional<ExecutionMode> gangway_mode(const PolicySpec& spec);

}  // namespace gangway
