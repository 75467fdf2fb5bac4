// The order of every request queue (each replica's, each small model's shared queue, the large
// model's), decided here and nowhere else: arrival order, or least slack first
// (AdmissionOptions::queue_order, docs/overload.md). A queued request's key is fixed when it is
// queued; a preempted request goes back with the key it had, so it stays ahead of younger ones.
// Keys of different queues compare, which is how policies that keep one global order across
// queues (fcfs, easy-backfill) find the request that goes first.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ids.h"
#include "core/node_spec.h"
#include "sched/admission/admission_options.h"
#include "sched/sequence.h"
#include "sched/ttft_predictor.h"

namespace gangway {

class QueueOrdering {
 public:
  // `predictor` gives the slack order's prefill estimate; it must be initialised before key()
  // is first asked.
  QueueOrdering(const NodeSpec& node, const AdmissionOptions& options,
                const TtftPredictor& predictor);

  // The key `seq` is queued under (smaller goes first; ties in queueing order). Arrival order:
  // its arrival time. Least slack first: its deadline (its class's TTFT target, its own deadline
  // if sooner, or the no-target deadline) minus its predicted prefill. Fixed at arrival, so the
  // order costs nothing to keep; requests without a target age into the front after
  // no_target_deadline.
  int64_t key(const Sequence& seq) const;
  // The classes whose queued work is served before a newcomer of `newcomer` (under least slack
  // first, those whose TTFT target is as tight; in arrival order, all): admission's wait
  // estimate counts only their tokens.
  const std::vector<SloClassId>& served_before(SloClassId newcomer) const {
    return served_before_[newcomer.value()];
  }

 private:
  const NodeSpec& node_;
  const AdmissionOptions& options_;
  const TtftPredictor& predictor_;
  std::vector<std::vector<SloClassId>> served_before_;  // by SloClassId value
};

}  // namespace gangway
