// The scheduler's side of admission control and overload handling (docs/overload.md). The
// decisions are the AdmissionController's (sched/admission/: rate limits, the overload ladder,
// the weight shift), which never looks at sequences or GPUs; this part gathers what it needs from
// the scheduler's state (the TTFT an arrival would see at the best place it could go) and works
// out what follows from its decisions: which queued requests the ladder sheds, which wait while
// the ladder defers their class, which resident request makes room for a more important one, and
// the ladder's level and weight shift as the policies read them (SchedulerState::overload, of
// which it is the only writer). It also holds the queue order (QueueOrdering).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/node_spec.h"
#include "core/outcome.h"
#include "core/request.h"
#include "sched/admission/admission_controller.h"
#include "sched/queue_ordering.h"
#include "sched/scheduler_options.h"
#include "sched/scheduler_state.h"
#include "sched/ttft_predictor.h"

namespace gangway {

class AdmissionGate {
 public:
  AdmissionGate(const NodeSpec& node, const SchedulerOptions& options, SchedulerState& state,
                const TtftPredictor& predictor);
  AdmissionGate(const AdmissionGate&) = delete;
  AdmissionGate& operator=(const AdmissionGate&) = delete;

  const AdmissionController& controller() const { return controller_; }
  const QueueOrdering& ordering() const { return ordering_; }

  // The rate limits, before any prediction is spent on the request: a rejection or nothing.
  std::optional<AdmissionVerdict> screen(const RequestSpec& spec, Time now) {
    return controller_.screen(spec, now);
  }
  // What admission knows of queued `seq` (not yet in any queue): the TTFT and wait it would see
  // at the best place it could go, corrected by the learned bias, and whether its model can run.
  AdmissionQuery query(const Sequence& seq, Time now) const;
  // Whether the query is a sample of the node's pressure (admission on, the model can run).
  bool samples_pressure(const AdmissionQuery& query) const {
    return controller_.enabled() && !query.no_capacity;
  }
  // Feeds the query's pressure to the ladder: true when the ladder began shedding more (the
  // caller ends the queued requests shed_victims() names, then calls publish_overload()).
  bool observe_pressure(ModelId model, const AdmissionQuery& query, Time now);
  // The controller's verdict; a rejection that says the node is busy is remembered for load
  // reports (SchedulerState::overload.last_busy_rejection).
  AdmissionVerdict decide(const RequestSpec& spec, const AdmissionQuery& query, Time now);

  // Queued requests of the classes the ladder sheds now, that have done no work yet (resident
  // ones finish; queued ones that produced tokens or wait swapped out are partly done) and hold
  // no promise (holds_promise()): a request admitted in a class with a target keeps its place,
  // and the ladder only turns away new arrivals of its class. Walks the queues, not the whole
  // sequence slab: this runs when the ladder climbs, the worst moment to spend O(live) time.
  const std::vector<SequenceHandle>& shed_victims();
  void note_shed_from_queue() { controller_.note_shed_from_queue(); }
  // Whether admission accepted `seq` on a promise: in the class it named (not downgraded), and
  // that class or the request itself has a TTFT target.
  bool holds_promise(const Sequence& seq) const;

  // Copies the ladder's level, pressure and weight shift to the state the policies read.
  void publish_overload(Time now);
  // Without arrivals the ladder is fed no pressure: it steps down on its own (never up, so
  // nothing is shed here), and the policies see the new level.
  void refresh_pressure(Time now) {
    if (controller_.refresh_pressure(now)) publish_overload(now);
  }
  // When the ladder may step down next (Time::max() at normal).
  Time next_pressure_refresh(Time now) const { return controller_.next_pressure_refresh(now); }

  // `seq` was admitted (in the class it is served in): its prefill counts toward the rate at
  // which its class's work arrives, which later arrivals of looser classes expect to be
  // overtaken by (least-slack order).
  void note_admitted(const Sequence& seq, Time now);

  // A request ended: calibrates the TTFT prediction made when it was admitted, and feeds the
  // weight shift (only the most important class's outcomes count).
  void note_finished(const Sequence& seq, const RequestRecord& record, Time now);
  // A request was turned away before it was queued: feeds the weight shift.
  void note_rejected(const RequestRecord& record, Time now) { note_slo_outcome(record, now); }

  // Whether a queued sequence at a queue's head must wait because the ladder defers its class
  // (rung defer_batch) while requests of other classes are queued. Never while deferral is
  // lifted (a decision pass repeated for progress: Scheduler::decide).
  bool deferred(const Sequence& seq) const;
  void lift_deferral(bool lifted) { deferral_lifted_ = lifted; }

  // Priority preemption: the head of this replica's queues is of the most important class and
  // cannot start for want of a batch slot or KV memory, while a sequence of the least important
  // class holds one: that sequence (the one with the least KV), which the caller takes off its
  // engine. kNoSequence when none should leave.
  SequenceHandle priority_victim(const Replica& replica) const;

 private:
  void predict_small_ttft(const Sequence& seq, Time now, AdmissionQuery& query) const;
  void predict_large_ttft(const Sequence& seq, Time now, AdmissionQuery& query) const;
  // Queued requests of `queue` that would be served before `seq`, a newcomer queued under `key`,
  // and their prefill tokens.
  struct WorkAhead {
    int64_t tokens = 0;
    int64_t requests = 0;
  };
  WorkAhead work_ahead(const RequestQueue& queue, const Sequence& seq, int64_t key) const;
  // The tighter classes whose later arrivals go ahead of `seq` (least-slack order, with
  // keep_promises): each one's admitted prefill tokens per second and the window in which its
  // arrivals still go ahead. Empty without keep_promises. One per arrival, for every replica.
  struct Overtaker {
    double tokens_per_s = 0;
    double window_s = 0;
  };
  struct Overtakers {
    std::array<Overtaker, 8> classes{};
    size_t count = 0;
  };
  Overtakers overtakers(const Sequence& seq, Time now) const;
  // How much longer than `wait` a newcomer waits because those classes' arrivals are served
  // first: their work (in seconds of work per token `seconds_per_token`, spread over `engines`)
  // over the window in which they still go ahead.
  static Duration overtaken(const Overtakers& overtakers, Duration wait, double seconds_per_token,
                            int64_t engines);
  // Admitted prefill tokens per second of `model` and `slo_class`, decayed over about a second.
  double admitted_token_rate(ModelId model, SloClassId slo_class, Time now) const;
  void note_slo_outcome(const RequestRecord& record, Time now);

  const NodeSpec& node_;
  const SchedulerOptions& options_;
  SchedulerState& state_;
  const TtftPredictor& predictor_;
  AdmissionController controller_;
  QueueOrdering ordering_;
  std::vector<SequenceHandle> victims_;
  struct DecayedCount {
    double tokens = 0;  // decayed to `at`
    Time at;
  };
  std::vector<DecayedCount> admitted_tokens_;  // by model, then class
  size_t rate_index(ModelId model, SloClassId slo_class) const {
    return model.value() * node_.slo_classes.size() + slo_class.value();
  }
  bool deferral_lifted_ = false;
  // By replica index: the cost model's time for the iteration predict_small_ttft assumes there,
  // with the resident decodes and KV context it was computed for. Cost models are pure, and a
  // replica's model (hence its token budget) is fixed, so the time is reused while both match.
  struct IterationMemo {
    bool valid = false;
    int32_t decodes = 0;
    int64_t context_tokens = 0;
    double iteration_s = 0;
  };
  mutable std::vector<IterationMemo> iteration_memo_;
};

}  // namespace gangway
