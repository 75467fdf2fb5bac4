// Settings of admission control and overload handling (docs/overload.md): the rate limits, the
// hard queue caps that keep memory bounded under any offered load, the overload ladder and what
// its rungs do, and the queue order (deadline slack). The scenario's `admission:` section.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/time.h"
#include "sched/admission/overload_ladder.h"
#include "sched/admission/weight_shift.h"

namespace gangway {

// Order of a model's queue (and a replica's).
enum class QueueOrder : uint8_t {
  kArrival,  // first come, first served
  kSlack,    // least slack first: deadline minus predicted prefill, set at arrival
};

// One token-bucket rule: requests matching it (a tenant, a class, or both; neither matches
// all) share a bucket of requests/s and one of prompt+max tokens/s, each with `burst_s`
// seconds of its rate as burst. A rate of zero means "no limit of that kind"; at least one of
// the two is set (the loader checks).
struct RateLimit {
  std::optional<TenantId> tenant;
  std::optional<SloClassId> slo_class;
  double requests_per_s = 0;
  double tokens_per_s = 0;
  double burst_s = 1.0;
};

struct AdmissionOptions {
  // Predict each arrival's TTFT and act on a predicted miss (the class's on_predicted_miss),
  // run the overload ladder. Off: every well-formed request is queued (rate limits and queue
  // caps still apply, so memory stays bounded).
  bool enabled = true;
  QueueOrder queue_order = QueueOrder::kSlack;
  // Deadline given to requests of classes without a TTFT target, for slack order: they still
  // get ahead of newer work once they have waited this long (aging).
  Duration no_target_deadline = std::chrono::seconds(30);
  // Hard cap on queued (not yet started) requests per model and class.
  int64_t queue_cap = 2048;
  std::vector<RateLimit> rate_limits;
  OverloadLadderSpec ladder;
  // The ladder's weight shift: the gang arbiter's LM/SM weight moves toward the tier whose
  // most important class misses more of its SLO (weight_shift.h). Off by default.
  WeightShiftSpec weight_shift;
  // Rung cap_batch_tokens: max_tokens of requests of the least important class is cut to this.
  int32_t capped_max_tokens = 256;
  // An arrival of the most important class may preempt a resident sequence of the least
  // important class on its replica when memory or batch slots are short.
  bool priority_preemption = true;
  // Admission keeps its promises (docs/overload.md, "Promise accuracy"): a request admitted in a
  // class with a TTFT target is never shed from its queue; looser classes are due the tightest
  // target early in the queue order; the wait prediction counts the queued work served first
  // (walking the queue in its order), the batch slots, and the work of tighter classes that will
  // arrive and go first; and the learned correction is the margin at which one admitted request
  // in a hundred misses its SLO. Off by default: it turns away more under overload.
  bool keep_promises = false;
};

}  // namespace gangway
