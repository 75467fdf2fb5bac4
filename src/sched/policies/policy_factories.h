// Factories of the individual gang policies; policy_registry.cc maps names to these. Each
// policy lives in its own file in this folder with a comment that says what it does and why it
// is there (a baseline that shows one failure mode, or one of gangway's own).
#pragma once

#include <memory>

#include "sched/gang_policy.h"
#include "sched/policy_spec.h"

namespace gangway {

std::unique_ptr<GangPolicy> make_fcfs_policy(const PolicySpec& spec);
std::unique_ptr<GangPolicy> make_sm_first_policy(const PolicySpec& spec);
std::unique_ptr<GangPolicy> make_lm_first_policy(const PolicySpec& spec);
std::unique_ptr<GangPolicy> make_time_slice_policy(const PolicySpec& spec);
std::unique_ptr<GangPolicy> make_easy_backfill_policy(const PolicySpec& spec);
// spec.mode chooses lease or exclusive.
std::unique_ptr<GangPolicy> make_gangway_policy(const PolicySpec& spec);

}  // namespace gangway
