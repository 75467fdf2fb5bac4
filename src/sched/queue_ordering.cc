#include "sched/queue_ordering.h"

#include <algorithm>

namespace gangway {

QueueOrdering::QueueOrdering(const NodeSpec& node, const AdmissionOptions& options,
                             const TtftPredictor& predictor)
    : node_(node), options_(options), predictor_(predictor) {
  bool any_target = false;
  for (const SloClass& slo : node_.slo_classes) {
    if (slo.ttft_target && (!any_target || *slo.ttft_target < tightest_target_)) {
      tightest_target_ = *slo.ttft_target;
      any_target = true;
    }
  }
  if (!any_target) tightest_target_ = Duration(0);
  for (const SloClass& newcomer : node_.slo_classes) {
    std::vector<SloClassId> first;
    for (const SloClass& queued : node_.slo_classes) {
      if (options_.queue_order != QueueOrder::kSlack ||
          order_offset(queued) <= order_offset(newcomer)) {
        first.push_back(queued.id);
      }
    }
    served_before_.push_back(std::move(first));
  }
}

Duration QueueOrdering::order_offset(const SloClass& slo) const {
  const Duration offset = slo.ttft_target.value_or(options_.no_target_deadline);
  if (!options_.keep_promises) return offset;
  return offset > tightest_target_ ? std::max(tightest_target_, offset - tightest_target_) : offset;
}

Duration QueueOrdering::overtaking_window(SloClassId queued, SloClassId later) const {
  if (!by_slack()) return Duration(0);
  return std::max(Duration(0),
                  order_offset(node_.slo_class(queued)) - order_offset(node_.slo_class(later)));
}

int64_t QueueOrdering::key(const Sequence& seq) const {
  if (options_.queue_order != QueueOrder::kSlack) return seq.spec.arrival.ns();
  const SloClass& slo = node_.slo_class(seq.spec.slo_class);
  Time deadline = seq.spec.arrival + order_offset(slo);
  if (seq.spec.ttft_deadline) deadline = std::min(deadline, *seq.spec.ttft_deadline);
  const Duration prefill = seconds_to_duration(
      seq.spec.prompt_tokens * predictor_.seconds_per_prefill_token(seq.spec.model));
  return (deadline - prefill).ns();
}

}  // namespace gangway
