// The extension point that decides how the large model's gang shares the node with the small
// models. The scheduler (mechanism) asks a policy a few fixed questions at fixed points of its
// decision pass; the policy answers from a read-only SchedulerView and keeps whatever accounting
// it needs (virtual time, windows, shadow times). Baselines and gangway's own policies implement
// this one interface, so they run on identical mechanism and are compared on equal terms.
//
// The decision pass, in order:
//   plan(now)                     once per pass: refresh per-pass computations
//   want_gang(now)                gang off and large work exists: ask for a gang phase?
//   keep_gang(now)                gang active, at a large-model iteration boundary: go on?
//   admit_large(seq, now)         may a queued large request join the gang's batch?
//   admit_small(replica, seq, now) may a queued small request join a replica's batch?
//   force_drain(now)              exclusive mode, gang pending: evict stragglers now?
//   next_wakeup(now)              when to be asked again if nothing else happens
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/time.h"
#include "sched/execution_mode.h"
#include "sched/iteration.h"
#include "sched/scheduler_view.h"

namespace gangway {

// Exclusive-mode backfill, as a policy with a reservation saw it: how often the gang started
// after the reservation (the shadow time predicted when the gang was wanted) because small work
// ran longer than predicted, and by how much; and how much earlier it started where the drain
// was shorter than predicted (backfill that could have run and did not).
struct BackfillStats {
  int64_t reservations = 0;  // gang phases that started with a reservation
  int64_t overruns = 0;      // of those, phases that started after it
  double overrun_s_sum = 0;  // total lateness of those phases, s
  double overrun_s_max = 0;
  double early_s_sum = 0;  // total time phases started before their reservation, s

  // The gang was wanted with `reservation` and started at `start`.
  void record(Time reservation, Time start) {
    ++reservations;
    const double late_s = to_seconds(start - reservation);
    if (late_s > 0) {
      ++overruns;
      overrun_s_sum += late_s;
      overrun_s_max = late_s > overrun_s_max ? late_s : overrun_s_max;
    } else {
      early_s_sum -= late_s;
    }
  }
};

class GangPolicy {
 public:
  virtual ~GangPolicy() = default;
  virtual std::string_view name() const = 0;
  virtual ExecutionMode mode() const = 0;

  virtual void plan(const SchedulerView& state, Time now) {
    (void)state;
    (void)now;
  }
  virtual bool want_gang(const SchedulerView& state, Time now) = 0;
  // Lease mode: false releases the GPUs now (resident large sequences pause).
  // Exclusive mode: false stops admitting large requests; the gang is released when the
  // resident ones finish.
  virtual bool keep_gang(const SchedulerView& state, Time now) = 0;
  virtual bool admit_large(const SchedulerView& state, const Sequence& seq, Time now) {
    (void)state;
    (void)seq;
    (void)now;
    return true;
  }
  virtual bool admit_small(const SchedulerView& state, const Replica& replica, const Sequence& seq,
                           Time now) {
    (void)state;
    (void)replica;
    (void)seq;
    (void)now;
    return true;
  }
  // Exclusive mode, gang pending: evict the small sequences still resident on GPUs at their
  // boundary (their KV is dropped and recomputed later) rather than wait for them to finish?
  virtual bool force_drain(const SchedulerView& state, Time now) {
    (void)state;
    (void)now;
    return false;
  }
  virtual Time next_wakeup(const SchedulerView& state, Time now) const {
    (void)state;
    (void)now;
    return Time::max();
  }

  // Notifications, for policies that account for use (virtual time, shares). An iteration is
  // reported after its sequences have been updated (tokens counted, finished ones removed), so
  // the state is the one the next decision sees; launch.entries is empty by then, launch.shape says
  // what the iteration ran.
  virtual void on_iteration_finished(const SchedulerView& state, const IterationLaunch& launch,
                                     Time end) {
    (void)state;
    (void)launch;
    (void)end;
  }
  virtual void on_gang_pending(const SchedulerView& state, Time now) {
    (void)state;
    (void)now;
  }
  virtual void on_gang_started(const SchedulerView& state, Time now) {
    (void)state;
    (void)now;
  }
  virtual void on_gang_released(const SchedulerView& state, Time now) {
    (void)state;
    (void)now;
  }

  // Admission asks before it takes a large request whose class has a TPOT target: whether the
  // gang can keep its decode pace beside the resident large sequences (docs/gang-scheduling.md,
  // "Decode-pace reservation"). None: it can, or the policy makes no such promise; otherwise how
  // long until a retry may find room.
  virtual std::optional<Duration> large_pace_refusal(const SchedulerView& state,
                                                     const Sequence& seq, Time now) {
    (void)state;
    (void)seq;
    (void)now;
    return std::nullopt;
  }

  // Exclusive-mode policies with a backfill reservation report how it held (zeros otherwise).
  virtual BackfillStats backfill_stats() const { return {}; }
};

}  // namespace gangway
