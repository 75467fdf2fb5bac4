// gangway: the node's own gang policy, in lease mode (iteration level) or exclusive mode
// (request level). See docs/gang-scheduling.md for the design and the waiting-time bounds.
//
// Both modes decide *when* the gang runs the same way, from three signals:
//   1. shares: a virtual-time arbiter over GPU-seconds gives the large model its weighted share
//      of the node while the small models contend for it (requests queued, or resident work
//      near its deadline), and whatever the small models do not need otherwise;
//   2. deadlines: a large request whose TTFT slack (or a resident large sequence whose TPOT
//      budget) is running out pulls the gang forward (in exclusive mode only while the drain
//      can still save its first token); a small request whose TTFT slack runs out cuts a lease
//      short once lease_min has been served; when both are pressed, the earlier deadline wins
//      if it is a large first token and the node has headroom, else the small work;
//   3. aging: no large request waits longer than max_large_wait for a gang phase to begin, and
//      a lease goes on (up to lease_max) while requests that had aged when it began are queued.
// Within its share the large model waits batching_delay for requests to gather, so one barrier
// serves several of them.
//
// Lease mode: a lease lasts between lease_min and lease_max, longer while large requests are
// still queued (the horizon adapts to the queue: all of them join the batch), shorter when the
// large model reaches its share or a small request becomes urgent. Small sequences pause in
// place during the lease; large sequences pause between leases.
//
// Exclusive mode: once the gang is wanted, GPUs drain their small requests while backfill lets
// short small requests start if they are predicted to end before the shadow time. If the drain
// overruns its prediction by overrun_grace, the stragglers are evicted (KV dropped, recomputed
// later) when that costs less GPU-time than idling the drained GPUs until they finish, and always
// once the oldest large request has waited max_large_wait, which keeps the gang's start bounded.
//
// The three signals are one file because each decision weighs all of them against the same
// state; the parts that stand alone are beside it: the arbiter (virtual_time_arbiter.h), the
// deadline clocks the decisions compare (tier_urgency), the demand split (tier_demand), the
// decode-pace reservation (decode_pace_reservation) and backfill (backfill_planner).

#include <algorithm>
#include <optional>

#include "sched/policies/backfill_planner.h"
#include "sched/policies/decode_pace_reservation.h"
#include "sched/policies/policy_factories.h"
#include "sched/policies/tier_demand.h"
#include "sched/policies/tier_urgency.h"
#include "sched/policies/virtual_time_arbiter.h"

namespace gangway {

namespace {

// How long after admission last turned an arrival away as busy the node counts as saturated.
constexpr Duration kHeadroomQuietPeriod = std::chrono::seconds(1);
// The overload ladder's pressure (predicted wait over the tightest TTFT target) below which the
// node counts as lightly loaded for the large model's decode pace (barrier_ahead).
constexpr double kLightLoadPressure = 0.1;
// policy.split: demand. The horizon of prefill work without a first-token target in the tiers'
// demands (admission's default no-target deadline), and the least weight the arbiter is given
// (a weight of zero would make a tier's virtual time infinite).
constexpr Duration kNoTargetHorizon = std::chrono::seconds(30);
constexpr double kLeastWeight = 0.01;

class GangwayPolicy final : public GangPolicy {
 public:
  GangwayPolicy(const PolicySpec& spec, ExecutionMode mode)
      : spec_(for_mode(spec, mode)),
        mode_(mode),
        arbiter_(spec.large_weight, spec.small_weight, 8),
        demand_split_(mode == ExecutionMode::kLease && spec.split == TierSplit::kDemand),
        split_(share_limits(spec), DemandSplit::RecentPrefill::kIgnored),
        pace_reservation_(mode == ExecutionMode::kLease && spec.pace_reserve, demand_split_,
                          share_limits(spec)),
        urgency_(mode, spec.urgency_margin),
        planner_(spec.conservative_backfill) {}

  std::string_view name() const override { return "gangway"; }

  // Exclusive mode reads its own aging bound and phase length (PolicySpec).
  static PolicySpec for_mode(PolicySpec spec, ExecutionMode mode) {
    if (mode == ExecutionMode::kExclusive) {
      spec.max_large_wait = spec.exclusive_max_large_wait;
      spec.lease_max = std::max(spec.lease_min, spec.exclusive_phase_max);
    }
    return spec;
  }
  ExecutionMode mode() const override { return mode_; }

  void plan(const SchedulerView& state, Time now) override {
    if (!initialised_) initialise(state);
    // The overload ladder's weight shift (docs/overload.md): 1 unless it is on and one tier's
    // SLO is at risk.
    arbiter_.set_large_weight_factor(state.overload().large_weight_factor);
    large_backlogged_ = state.has_large_work();
    small_backlogged_ = state.any_small_queued() || state.small_resident() > 0;
    // The small pool contends for the node (and the shares apply) only while it has requests
    // waiting for admission or resident work whose deadlines are near. Resident sequences with
    // slack do not contend: continuous batching keeps some small sequence resident almost all
    // the time, and counting that as demand held the large model to its weighted share even
    // where the small models needed a fraction of the node (docs/gang-scheduling.md).
    small_contending_ =
        state.any_small_queued() ||
        (small_backlogged_ && urgency_.earliest_small_urgency(state) <= now + spec_.lease_max);
    if (demand_split_) plan_split(state, now);
    arbiter_.observe_backlog(large_backlogged_, small_contending_);
    if (mode_ == ExecutionMode::kExclusive) planner_.refresh(state, now);
  }

  bool want_gang(const SchedulerView& state, Time now) override {
    if (!small_backlogged_) return true;
    const Time waiting_since = large_waiting_since(state);
    if (now - waiting_since >= spec_.max_large_wait) return true;
    // With headroom, a large request whose first token is due before the most pressed small
    // work's wins: the gang starts now. Otherwise small work that a lease starting now would make
    // late wins, unless the large model has fallen behind its weighted share: then the shares
    // decide.
    const Duration barrier = barrier_estimate(state, now);
    const Time small_urgency = urgency_.earliest_small_urgency(state);
    // Exclusive mode: the barrier is a drain of seconds, which most first-token deadlines do not
    // survive. A large request whose latest start falls before the drain's end pulls nothing (a
    // drain spent on it saves no SLO; it waits for its share or its aging bound), and one that
    // the drain can still save pulls the gang while its latest start is within urgency_margin
    // of the drain's end (decisions come at iteration boundaries, not at that exact instant).
    const bool exclusive = mode_ == ExecutionMode::kExclusive;
    const Time first_token_urgency = urgency_.large_first_token_urgency(
        state, exclusive ? std::optional<Time>(now + barrier) : std::nullopt);
    const Time gang_ready = now + barrier + (exclusive ? spec_.urgency_margin : Duration(0));
    // The decode urgency walks every resident large sequence: computed once, when first needed.
    std::optional<Time> decode_urgency;
    auto decode_due = [&] {
      if (!decode_urgency) decode_urgency = urgency_.large_decode_urgency(state);
      return *decode_urgency;
    };
    if (deadlines_order_tiers(state, now) && gang_ready >= first_token_urgency &&
        first_token_urgency <= small_urgency) {
      return true;
    }
    // Demand split: while both tiers' demands fit in the node, the earlier deadline wins
    // whichever tier it is (earliest deadline first meets every deadline of a feasible set);
    // decode paces count.
    if (demand_split_ && split_.feasible()) {
      const Time large_due = std::min(first_token_urgency, decode_due());
      if (gang_ready >= large_due && large_due <= small_urgency) return true;
      if (gang_ready + state.large()->last_iteration >= small_urgency) return false;
    }
    // Decode-pace reservation: resident sequences with a TPOT target that the large model's
    // time can pace (DecodePaceReservation::reserved) take the gang at their pace point unless the
    // most pressed small work is due first (earliest deadline first between the two); beyond the
    // budget the shares decide.
    if (pace_reservation_.enabled()) {
      const Time paced_due = urgency_.large_decode_urgency(state, /*targets_only=*/true);
      if (gang_ready >= paced_due && paced_due <= small_urgency &&
          pace_reservation_.reserved(state, now)) {
        return true;
      }
    }
    if (now + barrier + spec_.lease_min >= small_urgency &&
        !arbiter_.large_within_share(spec_.lease_min)) {
      return false;
    }
    const Time large_urgency = std::min(first_token_urgency, decode_due());
    if (gang_ready >= large_urgency) return true;
    if (now + barrier_ahead(state, barrier) >= decode_due()) return true;
    // New large requests (not just resident ones decoding) that have gathered long enough, while
    // the large model is within its share of the node.
    if (state.large()->queue.empty()) return false;
    const Time oldest = state.sequence(state.large()->queue.front()).spec.arrival;
    return large_may_take_more() && now - oldest >= spec_.batching_delay;
  }

  bool keep_gang(const SchedulerView& state, Time now) override {
    if (!small_backlogged_) return true;
    const Duration elapsed = now - state.gang().active_since;
    if (elapsed < spec_.lease_min) return true;
    if (elapsed >= spec_.lease_max) return false;
    // Exclusive mode: every large request already waiting when a request-level phase began
    // joins it whatever the small models' pressure (within the phase's length): the phase cost
    // a whole drain, and rare phases that admit only part of the queue would leave requests
    // waiting phase after phase. (Lease mode admits at least one iteration's token budget per
    // lease and leases recur within max_large_wait, which bounds the wait of a short queue.)
    if (mode_ == ExecutionMode::kExclusive && !state.large()->queue.empty() &&
        state.sequence(state.large()->queue.front()).spec.arrival <= state.gang().active_since) {
      return true;
    }
    const Duration step = state.large()->last_iteration;
    // Large requests that have waited out their aging bound and were queued before this lease
    // began join it whatever the small models' pressure (within lease_max): a lease cut at
    // lease_min admits a token budget or two, and under a long large queue aging would then
    // grant one short lease per max_large_wait, too little to keep the queue bounded.
    if (large_head_aged(state, now)) return true;
    const Time small_latest = urgency_.earliest_small_urgency(state);
    // Small work that one more large iteration would make late ends the lease, unless (with
    // headroom) a large request's first token is due before it.
    if (now + step >= small_latest) {
      if (deadlines_order_tiers(state, now) &&
          urgency_.large_first_token_urgency(state) <= small_latest) {
        return true;
      }
      // A reserved pace point (want_gang) that is due keeps the lease for its token.
      if (pace_reservation_.enabled() &&
          now >= urgency_.large_decode_urgency(state, /*targets_only=*/true) &&
          pace_reservation_.reserved(state, now)) {
        return true;
      }
      // Demand split, while the demands fit: the lease goes on for large work due no later than
      // the small work (a decode on pace, or a first token), earliest deadline first.
      if (!demand_split_ || !split_.feasible()) return false;
      const Time large_latest = urgency_.earliest_large_urgency(state);
      return large_latest <= small_latest && now + step >= large_latest;
    }
    // The horizon adapts to the queue: large requests that arrive during it join too while no
    // small work is pressed.
    if (!state.large()->queue.empty()) return true;
    if (mode_ == ExecutionMode::kExclusive) return false;
    // Only resident sequences decoding: keep the gang while one of them is due a token (by its
    // TPOT target, or the pace owed to sequences without one) or while the large model may take
    // more than deadlines demand (within its share, or the small models not contending). Not
    // merely because no small work would be late after another lease_min: decoding ahead of the
    // large sequences' deadlines banks slack for them that the paused small sequences, not yet
    // near their own deadlines, pay for in TPOT.
    return now >= urgency_.earliest_large_urgency(state) || large_may_take_more();
  }

  bool admit_small(const SchedulerView& state, const Replica& replica, const Sequence& seq,
                   Time now) override {
    if (mode_ == ExecutionMode::kLease || state.gang().phase != GangPhase::kPending) return true;
    // Backfill: only what is predicted to end before the gang's reservation. The reservation is
    // fixed when the gang is wanted, so backfill cannot push it later bit by bit.
    // Once stragglers are being evicted, nothing new starts: it would only be evicted too.
    return !evicting_ && now < pending_shadow_ &&
           planner_.ends_by(state, replica, seq, now, pending_shadow_);
  }

  bool force_drain(const SchedulerView& state, Time now) override {
    if (mode_ != ExecutionMode::kExclusive) return false;
    evicting_ = evicting_ || now - large_waiting_since(state) >= spec_.max_large_wait ||
                evicting_is_cheaper(state, now);
    return evicting_;
  }

  // The drain overran its prediction by overrun_grace: waiting costs the drained GPUs' idle time
  // until the stragglers finish; evicting costs recomputing the stragglers' KV later.
  bool evicting_is_cheaper(const SchedulerView& state, Time now) const {
    const Time shadow = planner_.shadow_time(now);
    if (now < pending_shadow_ + spec_.overrun_grace) return false;
    double idle_gpus = 0;
    double recompute_s = 0;
    for (const GpuRuntime& gpu : state.gpus()) {
      bool resident = false;
      for (uint32_t index : gpu.replicas) {
        for (SequenceHandle h : state.replicas()[index].running) {
          resident = true;
          const Sequence& seq = state.sequence(h);
          const ModelSpec& model = state.node().model(seq.spec.model);
          recompute_s += to_seconds(
              prefill_time(*state.small_models()[model.id.value()].cost, model, seq.kv_tokens, 0));
        }
      }
      if (!resident) ++idle_gpus;
    }
    const double wait_s = idle_gpus * to_seconds(shadow - now);
    return recompute_s < wait_s;
  }

  Time next_wakeup(const SchedulerView& state, Time now) const override {
    if (!large_backlogged_ || state.gang().phase == GangPhase::kActive) return Time::max();
    if (state.gang().phase == GangPhase::kPending) {
      if (mode_ != ExecutionMode::kExclusive) return Time::max();
      return std::max(now, pending_shadow_ + spec_.overrun_grace);
    }
    const Time since = large_waiting_since(state);
    Time wake = since + spec_.max_large_wait;
    if (large_may_take_more()) wake = std::min(wake, since + spec_.batching_delay);
    // The large model's urgencies; a decode is due barrier_ahead() before its pace point (never
    // later than the point itself).
    wake = std::min(wake, urgency_.large_first_token_urgency(state));
    if (const Time decode_due = urgency_.large_decode_urgency(state); decode_due != Time::max()) {
      wake = std::min(wake, decode_due - barrier_ahead(state, Duration(0)));
    }
    return wake > now ? wake : Time::max();
  }

  void on_iteration_finished(const SchedulerView& state, const IterationLaunch& launch,
                             Time end) override {
    const Duration busy = end - launch.start;
    pace_reservation_.on_iteration_finished(launch, end);
    if (demand_split_) split_.on_iteration_finished(launch, end);
    if (launch.engine.gang) {
      arbiter_.charge_large(busy);
      return;
    }
    arbiter_.charge_small(busy);
    planner_.invalidate(launch.engine.gpu);
    urgency_.on_small_iteration(state, launch.engine.gpu, busy);
    if (state.gang().phase == GangPhase::kPending) {
      small_busy_while_pending_s_ +=
          to_seconds(end - std::max(launch.start, state.gang().pending_since));
    }
  }

  void on_gang_pending(const SchedulerView& state, Time now) override {
    if (mode_ == ExecutionMode::kExclusive) {
      planner_.refresh(state, now);
      pending_shadow_ = planner_.shadow_time(now);
    }
  }

  void on_gang_started(const SchedulerView& state, Time now) override {
    if (mode_ == ExecutionMode::kExclusive) backfill_stats_.record(pending_shadow_, now);
    evicting_ = false;
    // The barrier: GPU-time between the gang being wanted and starting that small work did not
    // use. The large model caused it, so it pays for it.
    const double window_gpu_s =
        static_cast<double>(state.gpus().size()) * to_seconds(now - state.gang().pending_since);
    arbiter_.charge_large_gpu_seconds(std::max(0.0, window_gpu_s - small_busy_while_pending_s_));
    small_busy_while_pending_s_ = 0;
    last_lease_start_ = now;
    last_lease_end_ = now;
  }

  void on_gang_released(const SchedulerView&, Time now) override { last_lease_end_ = now; }

  BackfillStats backfill_stats() const override { return backfill_stats_; }

  // Admission's decode-pace screen (docs/gang-scheduling.md, "Decode-pace reservation"), for
  // large arrivals with a TPOT target while the reservation acts.
  std::optional<Duration> large_pace_refusal(const SchedulerView& state, const Sequence& seq,
                                             Time now) override {
    if (!pace_reservation_.reserving(state)) return std::nullopt;
    const std::optional<Duration> target = state.node().slo_class(seq.spec.slo_class).tpot_target;
    if (!target) return std::nullopt;
    if (!initialised_) initialise(state);
    return pace_reservation_.refusal(state, seq, now, urgency_.large_chunk_time());
  }

 private:
  void initialise(const SchedulerView& state) {
    initialised_ = true;
    if (demand_split_) split_.initialise(state, kNoTargetHorizon);
    pace_reservation_.initialise(state, kNoTargetHorizon);
    arbiter_ = VirtualTimeArbiter(spec_.large_weight, spec_.small_weight,
                                  static_cast<int>(state.gpus().size()));
    urgency_.initialise(state);
  }

  // policy.split: demand (docs/gang-scheduling.md, "The split follows demand"): the tiers'
  // demands now, the large model's share from them within the operator's floor and ceiling, and
  // the arbiter's weights set to it, so that wherever deadlines conflict the shares decide as
  // the demands say.
  void plan_split(const SchedulerView& state, Time now) {
    const SharePlan& plan = split_.plan(state, now);
    if (plan.contended()) {
      arbiter_.set_weights(std::max(kLeastWeight, plan.large_share),
                           std::max(kLeastWeight, 1.0 - plan.large_share));
    }
  }

  // Whether a large request's first-token deadline may win over small work that is due later
  // (want_gang, keep_gang): only while the node has headroom, with the overload ladder at its
  // first rung and no arrival turned away as busy for kHeadroomQuietPeriod. Near capacity every
  // such early lease is one more barrier the node cannot afford, and a large request costs the
  // GPU time of some fifteen small ones, so there the shares decide alone
  // (docs/gang-scheduling.md).
  static bool deadlines_order_tiers(const SchedulerView& state, Time now) {
    return state.overload().level == OverloadLevel::kNormal &&
           (!state.overload().last_busy_rejection ||
            now - *state.overload().last_busy_rejection >= kHeadroomQuietPeriod);
  }

  // How long until the gang could start: the busiest GPU's iteration in flight (lease mode) or
  // the predicted drain (exclusive mode).
  Duration barrier_estimate(const SchedulerView& state, Time now) const {
    Time ready = now;
    if (mode_ == ExecutionMode::kExclusive) {
      ready = planner_.shadow_time(now);
    } else {
      for (const GpuRuntime& gpu : state.gpus()) {
        if (gpu.small_busy) ready = std::max(ready, gpu.predicted_free);
      }
    }
    return ready - now;
  }

  // How long until the gang could start, as a resident large sequence's decode pace must judge
  // it (lease mode, on a lightly loaded node): the barrier now, or, if longer, the longest small
  // iteration last run on any GPU. Decisions come at iteration boundaries, so a GPU that finishes
  // one just before the pace point starts its next and holds the gang back by that much. A token
  // late on its pace point is made up later in the lease unless it was the sequence's last; on a
  // lightly loaded node, where the pace alone pulls every lease, that missed 5-15 % of the large
  // model's TPOT targets (docs/gang-scheduling.md, "Decode pace"). Lightly loaded: no small
  // request queued and the ladder's pressure under kLightLoadPressure. Otherwise the barrier
  // alone: starting the gang early delays small first tokens and costs the small models a small
  // iteration per lease, and near capacity that cost more small-model SLOs and goodput than it
  // saved large-model ones (the node reached the ladder's shedding rungs it otherwise stays out
  // of: tests/regressions/).
  Duration barrier_ahead(const SchedulerView& state, Duration barrier) const {
    if (mode_ != ExecutionMode::kLease || state.any_small_queued() ||
        state.overload().pressure >= kLightLoadPressure) {
      return barrier;
    }
    return std::max(barrier, urgency_.longest_small_step());
  }

  // The large model may take the gang beyond what deadlines demand: it is within its weighted
  // share, or the small models do not contend (nothing queued, nothing near its deadline).
  bool large_may_take_more() const { return !small_contending_ || arbiter_.large_within_share(); }

  // Whether the large queue's head was queued before the active lease began and has waited at
  // least max_large_wait since it arrived.
  bool large_head_aged(const SchedulerView& state, Time now) const {
    if (state.large()->queue.empty()) return false;
    const Time arrival = state.sequence(state.large()->queue.front()).spec.arrival;
    return arrival <= state.gang().active_since && now - arrival >= spec_.max_large_wait;
  }

  // Since when the large model has waited for the gang without getting it: for its queue head,
  // since it arrived or since the last lease began, whichever is later (a lease that began after
  // it arrived was its chance); for resident sequences paused between leases, since the last
  // lease ended. The aging bound applies to this wait, so under a large-model overload aging
  // grants one lease per max_large_wait, not an endless stream of them.
  Time large_waiting_since(const SchedulerView& state) const {
    Time since = Time::max();
    if (!state.large()->queue.empty()) {
      since =
          std::max(state.sequence(state.large()->queue.front()).spec.arrival, last_lease_start_);
    }
    if (!state.large()->running.empty()) since = std::min(since, last_lease_end_);
    return since;
  }

  PolicySpec spec_;
  ExecutionMode mode_;
  VirtualTimeArbiter arbiter_;
  bool demand_split_;
  // policy.split: demand's plan, from queued prefill (the pace reservation reads its own, with
  // the prefill computed lately too).
  DemandSplit split_;
  DecodePaceReservation pace_reservation_;  // policy.pace_reserve, in lease mode
  TierUrgency urgency_;
  BackfillPlanner planner_;
  bool initialised_ = false;
  bool large_backlogged_ = false;
  bool small_backlogged_ = false;  // small work queued or resident
  bool small_contending_ = false;  // small work queued, or resident and near its deadline
  Time last_lease_start_;
  Time last_lease_end_;
  Time pending_shadow_;
  BackfillStats backfill_stats_;  // exclusive mode: how the drain's reservation held
  bool evicting_ = false;         // exclusive mode: this gang phase's drain is being forced
  double small_busy_while_pending_s_ = 0;
};

}  // namespace

std::unique_ptr<GangPolicy> make_gangway_policy(const PolicySpec& spec) {
  return std::make_unique<GangwayPolicy>(spec, spec.mode);
}

}  // namespace gangway
