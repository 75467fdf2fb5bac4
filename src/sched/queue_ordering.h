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
  // if sooner, or the no-target deadline) minus its predicted prefill. A class whose target is
  // looser than the tightest is due the tightest target earlier: when it comes to the head, the
  // tighter work queued ahead of it (up to the tightest target's worth, which admission keeps
  // it to) still has to run, and it must make its own deadline after that. Fixed at arrival, so
  // the order costs nothing to keep; requests without a target age into the front after
  // no_target_deadline.
  int64_t key(const Sequence& seq) const;
  // The classes whose queued work is served before a newcomer of `newcomer` (under least slack
  // first, those whose TTFT target is as tight; in arrival order, all): admission's wait
  // estimate counts only their tokens.
  const std::vector<SloClassId>& served_before(SloClassId newcomer) const {
    return served_before_[newcomer.value()];
  }
  // Whether queues are ordered by least slack (else by arrival).
  bool by_slack() const { return options_.queue_order == QueueOrder::kSlack; }
  // How long after a request of `queued` arrives a newcomer of `later` still goes ahead of it:
  // the difference of their deadline offsets under least slack first (zero when `later`'s
  // target is no tighter, and always in arrival order).
  Duration overtaking_window(SloClassId queued, SloClassId later) const;
  // How long after arrival a request of `slo` is due in the order (key() before its prefill).
  Duration order_offset(const SloClass& slo) const;

 private:
  const NodeSpec& node_;
  const AdmissionOptions& options_;
  const TtftPredictor& predictor_;
  std::vector<std::vector<SloClassId>> served_before_;  // by SloClassId value
  Duration tightest_target_{0};                         // zero when no class has a target
};

}  // namespace gangway
