// The parameters of a gang policy, as read from a scenario's `policy:` section. One flat struct
// for every policy keeps the YAML mapping and its validation in one place; each policy reads the
// fields it documents and the registry rejects values that make no sense for it.
#pragma once

#include <string>

#include "core/time.h"
#include "sched/execution_mode.h"

namespace gangway {

struct PolicySpec {
  std::string name = "fcfs";

  // time-slice: a fixed cycle of `slice_period`, the first `slice_large_share` of which belongs
  // to the large model; no feedback from queues.
  Duration slice_period = std::chrono::milliseconds(200);
  double slice_large_share = 0.5;

  // gangway: `mode` picks lease (iteration level) or exclusive (request level, backfill).
  ExecutionMode mode = ExecutionMode::kLease;
  // Shares of GPU-time when both tiers have work: the large model gets
  // large_weight / (large_weight + small_weight) of it, the small models the rest.
  // The default favours the small models 6:1 under contention: a small request is ~15x cheaper
  // than a large one, so GPU-time given to the small models buys more goodput (requests meeting
  // their SLO per second); the large model still gets a seventh of a contended node plus its
  // aging bound (docs/gang-scheduling.md). Uncontended, either tier takes what it needs.
  double large_weight = 1.0;
  double small_weight = 6.0;
  // Lease mode: how the shares are set while both tiers have work. kWeights (the default): the
  // weights above. kDemand: from the tiers' demands (sched/policies/tier_demand.h: the decode
  // pace of resident sequences and queued prefill over TTFT slack), each tier getting what its
  // deadlines need when both fit and the weights splitting only the rest, the large model's
  // share held within [large_share_min, large_share_max] (the operator's floor, its guarantee
  // under overload, and ceiling, the small models' guarantee; docs/gang-scheduling.md).
  TierSplit split = TierSplit::kWeights;
  double large_share_min = 0.3;
  double large_share_max = 0.7;
  // Lease mode: the decode-pace reservation (docs/gang-scheduling.md, "Decode-pace
  // reservation"). Resident large sequences with a TPOT target take the gang at their pace point
  // over the small models' urgency while their pace fits in the large model's pace budget, and
  // admission takes a large request with a TPOT target only if the gang can pace it beside them.
  bool pace_reserve = false;
  // A lease, once started, lasts at least lease_min (so its barrier is worth paying) and at most
  // lease_max (the bound on how long small requests wait), less if the large queue empties.
  Duration lease_min = std::chrono::milliseconds(40);
  Duration lease_max = std::chrono::milliseconds(150);
  // Aging: a large request never waits longer than this for a gang phase to begin, whatever
  // the shares say.
  Duration max_large_wait = std::chrono::milliseconds(1000);
  // While the large model is within its share and nothing is urgent, let its requests gather
  // this long before paying a barrier for them.
  Duration batching_delay = std::chrono::milliseconds(25);
  // A request whose deadline slack falls below this is urgent: an urgent large request pulls a
  // lease forward; an urgent small request cuts one short (after lease_min). Resident large
  // sequences that are decoding are judged by their pace alone, without it (tier_urgency.cc).
  Duration urgency_margin = std::chrono::milliseconds(40);
  // Exclusive mode: trust the 90th percentile of predicted lengths for backfill instead of the
  // mean (conservative backfill), and how long past the predicted drain the gang waits before
  // the cheaper of waiting and evicting the stragglers is chosen.
  bool conservative_backfill = true;
  Duration overrun_grace = std::chrono::milliseconds(50);
  // Exclusive mode's aging bound and phase length, in place of max_large_wait and lease_max:
  // entering a request-level gang phase costs a whole drain of every GPU, so it is worth paying
  // less often (measured in docs/results/gang-sweep.md).
  Duration exclusive_max_large_wait = std::chrono::milliseconds(5000);
  Duration exclusive_phase_max = std::chrono::milliseconds(2000);
};

}  // namespace gangway
