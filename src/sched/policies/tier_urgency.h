// The deadline clocks that gangway's gang decisions compare (docs/gang-scheduling.md): for each
// tier, the latest time it can next be served with its most pressed work still on time.
//  - the large model: the latest time the gang may start for a request waiting for its first
//    token to get it by its deadline (one prompt chunk per large iteration), and for a resident
//    sequence that is decoding to keep its pace (its class's TPOT target, or the pace owed to a
//    class without one);
//  - the small models: the latest time they can resume with their queued requests' first
//    tokens (behind the prompts queued ahead of them) and their resident sequences' TTFT and
//    mean TPOT targets still met.
// The policy weighs these clocks against the shares and the aging bound; they stand alone
// because they read only the scheduler's state and a few per-model constants, and the small
// models' clock keeps a per-GPU record that only finished iterations change.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "core/ids.h"
#include "core/time.h"
#include "sched/execution_mode.h"
#include "sched/scheduler_view.h"

namespace gangway {

class TierUrgency {
 public:
  // `urgency_margin` (policy.urgency_margin) is held back from every first-token deadline and
  // from the small models' TPOT deadlines: decisions come at iteration boundaries, not at the
  // exact instant work falls due.
  TierUrgency(ExecutionMode mode, Duration urgency_margin)
      : mode_(mode), urgency_margin_(urgency_margin) {}

  // Reads the per-model constants from the cost models and sizes the per-GPU record.
  void initialise(const SchedulerView& state);
  // A small-model iteration of `step` finished on `gpu`: the GPU's record is renewed (computed
  // now while the large model has work, else when first read).
  void on_small_iteration(const SchedulerView& state, GpuId gpu, Duration step);

  // The latest time the gang may start for the most pressed large request to stay on time.
  Time earliest_large_urgency(const SchedulerView& state) const;
  // The latest time the gang may start for every large request still waiting for its first
  // token (queue heads, and resident sequences part-way through prefill) to get it on time,
  // leaving out those whose latest start is before `not_before` (already lost).
  Time large_first_token_urgency(const SchedulerView& state,
                                 std::optional<Time> not_before = std::nullopt) const;
  // The latest time the gang may start for resident large sequences that are decoding to keep
  // their pace; with `targets_only`, only sequences whose class has a TPOT target count.
  Time large_decode_urgency(const SchedulerView& state, bool targets_only = false) const;
  // The latest time the small models can resume and keep their most pressed request on time.
  Time earliest_small_urgency(const SchedulerView& state) const;

  // The longest small iteration last run on any GPU (0 before any).
  Duration longest_small_step() const;
  // A lone prompt chunk's iteration on the large model (0 without a large model).
  Duration large_chunk_time() const { return large_chunk_time_; }

 private:
  std::optional<Time> first_token_due(const SchedulerView& state, const Sequence& seq) const;
  std::optional<Time> large_prefill_latest_start(const SchedulerView& state,
                                                 const Sequence& seq) const;
  Time latest_small_start(const SchedulerView& state, const GpuRuntime& gpu, Duration step) const;
  Time compute_first_token_urgency(const SchedulerView& state,
                                   std::optional<Time> not_before) const;
  Time compute_decode_urgency(const SchedulerView& state, bool targets_only) const;

  // A large-model urgency as of a generation of the large model's state
  // (LargeModelRuntime::generation): everything it reads changes only with a new generation.
  // Read several times per event (gang decisions, the next wakeup) while the large model's
  // state changes only at its own iterations, admissions and departures.
  // In test builds a kept value is checked against its recomputation: a change to the large
  // model's state that did not bump the generation would otherwise go unnoticed.
  struct UrgencyMemo {
    const LargeModelRuntime* large = nullptr;
    uint64_t generation = 0;
    Time value = Time::max();

    template <typename Compute>
    Time value_for(const SchedulerView& state, const Compute& compute) {
      if (large == nullptr || large != state.large() || generation != large->generation) {
        large = state.large();
        generation = large->generation;
        value = compute();
        return value;
      }
#ifdef GANGWAY_CHECK_INVARIANTS
      if (value != compute()) {
        throw std::logic_error(
            "TierUrgency: a large-model urgency kept for an unchanged generation differs from "
            "its recomputation (a change to the large model's state did not bump "
            "LargeModelRuntime::generation)");
      }
#endif
      return value;
    }
  };

  ExecutionMode mode_;
  Duration urgency_margin_;
  Duration large_chunk_time_{0};
  std::vector<double> small_prefill_ns_per_token_;  // by ModelId value
  // By GPU: latest_small_start() as of its last iteration (none: not computed yet), and that
  // iteration's length. Filled in on first read, hence mutable.
  mutable std::vector<std::optional<Time>> small_latest_start_;
  std::vector<Duration> small_last_step_;
  // By SloClassId value, the pace a resident large sequence of the class keeps: its TPOT target
  // (target_pace_), or that and DemandModel::unpaced_pace() for a class without one
  // (owed_pace_). Read in the
  // loop over every resident large sequence, once per decision.
  std::vector<std::optional<Duration>> target_pace_;
  std::vector<std::optional<Duration>> owed_pace_;
  mutable UrgencyMemo first_token_memo_;            // without a not_before
  mutable std::array<UrgencyMemo, 2> decode_memo_;  // by targets_only
};

}  // namespace gangway
