#include "sched/queue_ordering.h"

#include <algorithm>

namespace gangway {

QueueOrdering::QueueOrdering(const NodeSpec& node, const AdmissionOptions& options,
                             const TtftPredictor& predictor)
    : node_(node), options_(options), predictor_(predictor) {
  const auto deadline_offset = [&](const SloClass& slo) {
    return slo.ttft_target.value_or(options_.no_target_deadline);
  };
  for (const SloClass& newcomer : node_.slo_classes) {
    std::vector<SloClassId> first;
    for (const SloClass& queued : node_.slo_classes) {
      if (options_.queue_order != QueueOrder::kSlack ||
          deadline_offset(queued) <= deadline_offset(newcomer)) {
        first.push_back(queued.id);
      }
    }
    served_before_.push_back(std::move(first));
  }
}

int64_t QueueOrdering::key(const Sequence& seq) const {
  if (options_.queue_order != QueueOrder::kSlack) return seq.spec.arrival.ns();
  const SloClass& slo = node_.slo_class(seq.spec.slo_class);
  Time deadline = seq.spec.arrival + slo.ttft_target.value_or(options_.no_target_deadline);
  if (seq.spec.ttft_deadline) deadline = std::min(deadline, *seq.spec.ttft_deadline);
  const Duration prefill = seconds_to_duration(
      seq.spec.prompt_tokens * predictor_.seconds_per_prefill_token(seq.spec.model));
  return (deadline - prefill).ns();
}

}  // namespace gangway
