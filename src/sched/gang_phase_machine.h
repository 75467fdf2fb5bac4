// The gang's phase machine: off, pending (the GPUs reach their iteration boundary, or drain in
// exclusive mode), active (the gang holds every GPU and runs large-model iterations), and back
// off. It is the only writer of SchedulerState::gang; the policy decides when each step is
// wanted, the machine checks that it is possible and records it (gang events, phase lengths,
// the contended share admission reads).
//
// What a step needs done to sequences or engines it asks of its GangPhaseActions, which the
// Scheduler implements: the machine never touches a sequence or a KV pool itself.
#pragma once

#include "core/time.h"
#include "sched/effects.h"
#include "sched/gang_policy.h"
#include "sched/scheduler_state.h"

namespace gangway {

// What the phase machine asks of the scheduler at its steps.
class GangPhaseActions {
 public:
  // Builds and launches the gang's next large-model iteration (admitting queued large requests
  // if `admit_new`). False if there is nothing to run.
  virtual bool launch_large(Time now, bool admit_new) = 0;
  // Exclusive mode: takes every small sequence resident on an idle GPU off it (recomputed
  // later), so the gang need not wait for them to finish.
  virtual void preempt_idle_small(Time now) = 0;
  // Lease mode: the small sequences still resident when a phase starts stay paused in place;
  // counted as the preemption choice they are.
  virtual void count_lease_pauses() = 0;

 protected:
  ~GangPhaseActions() = default;
};

class GangPhaseMachine {
 public:
  GangPhaseMachine(SchedulerState& state, GangPolicy& policy, Effects& effects,
                   GangPhaseActions& actions)
      : state_(state), policy_(policy), effects_(effects), actions_(actions) {}

  // One step of the decision pass: starts a phase the policy wants, activates a pending one whose
  // GPUs are all at their boundary, launches the active gang's next iteration or releases it.
  void advance(Time now);
  // Ends the phase in progress (active or pending) now.
  void release(Time now);

 private:
  SchedulerState& state_;
  GangPolicy& policy_;
  Effects& effects_;
  GangPhaseActions& actions_;
};

}  // namespace gangway
