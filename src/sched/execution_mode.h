// How the gang and the small models share the GPUs: the execution mode (how work yields the GPUs
// when the gang takes them) and, in lease mode, how the tiers' shares are set.
#pragma once

#include <cstdint>

namespace gangway {

// How work yields the GPUs when the gang takes them.
//  kLease: iteration level. Resident sequences pause in place: a small-model sequence stays
//    resident through a gang lease and resumes after it; a large-model sequence stays resident
//    between leases. A gang waits at most one small-model iteration at its barrier.
//  kExclusive: request level. A request holds its GPUs from start to end: the gang starts only
//    once no small-model sequence is resident, and gives the GPUs back only once its own
//    sequences have finished (the policy stops admitting to drain it).
enum class ExecutionMode : uint8_t { kLease, kExclusive };

// Lease mode: how the tiers' shares of GPU-time are set while both have work.
//  kWeights: the policy's fixed weights.
//  kDemand: from the tiers' demands, within the policy's floor and ceiling on the large model's
//    share (sched/policies/tier_demand.h).
enum class TierSplit : uint8_t { kWeights, kDemand };

// The names scenarios and reports use: "lease" / "exclusive", "weights" / "demand".
const char* to_string(ExecutionMode mode);
const char* to_string(TierSplit split);

}  // namespace gangway
