// The gang's phase machine (sched/gang_phase_machine.h).

#include "sched/gang_phase_machine.h"

#include <algorithm>

namespace gangway {

void GangPhaseMachine::advance(Time now) {
  if (!state_.large) return;
  GangRuntime& gang = state_.gang;
  const bool lease = policy_.mode() == ExecutionMode::kLease;

  if (gang.phase == GangPhase::kOff && state_.has_large_work() && !state_.any_gpu_failed() &&
      policy_.want_gang(state_, now)) {
    gang.phase = GangPhase::kPending;
    gang.pending_since = now;
    policy_.on_gang_pending(state_, now);
    effects_.gang_events.push_back({GangEventKind::kPending, now});
  }
  if (gang.phase == GangPhase::kPending) {
    if (!state_.has_large_work()) {
      gang.phase = GangPhase::kOff;
      effects_.gang_events.push_back({GangEventKind::kReleased, now});
      return;
    }
    if (!lease && state_.small_resident() > 0 && policy_.force_drain(state_, now)) {
      // The policy judged waiting for the drain dearer than recomputing the stragglers.
      actions_.preempt_idle_small(now);
    }
    const bool all_at_boundary = std::none_of(state_.gpus.begin(), state_.gpus.end(),
                                              [](const GpuRuntime& g) { return g.small_busy; });
    if (!all_at_boundary || (!lease && state_.small_resident() > 0)) return;
    gang.phase = GangPhase::kActive;
    gang.active_since = now;
    gang.admitting = true;
    ++gang.phases_started;
    if (lease) actions_.count_lease_pauses();
    policy_.on_gang_started(state_, now);
    effects_.gang_events.push_back({GangEventKind::kStarted, now});
  }
  if (gang.phase != GangPhase::kActive || state_.large->busy) return;

  const bool keep = policy_.keep_gang(state_, now);
  if (lease) {
    if (keep && actions_.launch_large(now, /*admit_new=*/true)) return;
  } else {
    if (!keep) gang.admitting = false;
    if (actions_.launch_large(now, gang.admitting)) return;
  }
  release(now);
}

void GangPhaseMachine::release(Time now) {
  // Smoothed phase length (weight 1/4 on the newest), for the routers' blackout prediction.
  GangRuntime& gang = state_.gang;
  const Duration length = now - gang.active_since;
  gang.typical_phase = gang.typical_phase == Duration(0)
                           ? length
                           : gang.typical_phase + (length - gang.typical_phase) / 4;
  // Under contention (large work still waiting), the cycle from the last release to this one
  // gives the gang's share of time: admission stretches queued work by it.
  if (state_.has_large_work() && gang.last_released > Time::zero()) {
    const Duration cycle = now - gang.last_released;
    if (cycle > Duration(0)) {
      const double share = std::clamp(to_seconds(length) / to_seconds(cycle), 0.0, 1.0);
      gang.contended_share += (share - gang.contended_share) / 4;
    }
  }
  gang.last_released = now;
  gang.phase = GangPhase::kOff;
  policy_.on_gang_released(state_, now);
  effects_.gang_events.push_back({GangEventKind::kReleased, now});
}

}  // namespace gangway
