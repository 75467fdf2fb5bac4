#include "sched/policies/decode_pace_reservation.h"

#include <algorithm>

namespace gangway {

void DecodePaceReservation::initialise(const SchedulerView& state, Duration no_target_horizon) {
  if (!enabled_) return;
  // A refused arrival may find room once the small models' queued work, due within their
  // tightest first-token target, is done.
  retry_after_ = no_target_horizon;
  for (const SloClass& slo : state.node().slo_classes) {
    if (slo.ttft_target) retry_after_ = std::min(retry_after_, *slo.ttft_target);
  }
  demand_.initialise(state, no_target_horizon);
}

void DecodePaceReservation::on_iteration_finished(const IterationLaunch& launch, Time end) {
  if (enabled_) demand_.on_iteration_finished(launch, end);
}

// Once the node sheds work the shares decide alone, as without the reservation: turning the
// large model's interactive arrivals away there leaves its queue short, the ladder lower, and
// the small models' looser classes admitted in the interactive requests' place
// (docs/gang-scheduling.md, "Decode-pace reservation").
bool DecodePaceReservation::reserving(const SchedulerView& state) const {
  return enabled_ && state.large() != nullptr && state.overload().level < OverloadLevel::kShedBatch;
}

bool DecodePaceReservation::reserved(const SchedulerView& state, Time now) {
  if (!reserving(state)) return false;
  const double need = large_pace_need(state, nullptr, 0);
  return need > 0 && need <= pace_budget(state, demand_.plan(state, now));
}

// The arrival is taken only if the share of time the gang needs to pace it beside the resident
// sequences (with the large model's prefill demand riding in the paced iterations) fits in the
// pace budget; otherwise the retry waits retry_after_.
std::optional<Duration> DecodePaceReservation::refusal(const SchedulerView& state,
                                                       const Sequence& arrival, Time now,
                                                       Duration large_chunk_time) {
  const SharePlan& plan = demand_.plan(state, now);
  // The large model's prefill demand, as prompt tokens per second, rides in the paced
  // iterations.
  const double lone_token_s = to_seconds(large_chunk_time) * state.large()->slowdown /
                              state.node().model(state.large()->model).prefill_chunk_tokens;
  const double need = large_pace_need(state, &arrival, plan.large.prefill / lone_token_s);
  if (need <= pace_budget(state, plan)) return std::nullopt;
  return retry_after_;
}

// The share of the node's time the gang needs to keep the resident large sequences with a TPOT
// target on pace (and `arrival`, if given, as one of them): one iteration per tightest target
// among them, of every resident decoding sequence (an iteration runs them all) and the prompt
// tokens that arrive in a period at `prefill_tokens_per_s`, at the cost model's time for that
// batch. Zero when none has a target.
double DecodePaceReservation::large_pace_need(const SchedulerView& state, const Sequence* arrival,
                                              double prefill_tokens_per_s) const {
  const LargeModelRuntime& large = *state.large();
  BatchShape shape;
  std::optional<Duration> period;
  auto add = [&](const Sequence& seq, int64_t context) {
    ++shape.decode_seqs;
    shape.decode_context_tokens += context;
    const std::optional<Duration> tpot = state.node().slo_class(seq.spec.slo_class).tpot_target;
    if (tpot && (!period || *tpot < *period)) period = tpot;
  };
  for (SequenceHandle h : large.running) {
    const Sequence& seq = state.sequence(h);
    if (seq.first_token) add(seq, seq.kv_tokens);
  }
  if (arrival != nullptr) add(*arrival, arrival->spec.prompt_tokens);
  if (!period) return 0;
  const double prefill = prefill_tokens_per_s * to_seconds(*period);
  if (prefill >= 1) {
    shape.prefill_tokens = static_cast<int32_t>(prefill);
    shape.prefill_seqs = 1;
  }
  return to_seconds(large.cost->iteration_time(shape)) * large.slowdown / to_seconds(*period);
}

// The share of the node's time the large model's decode pace may count on: what the small
// models' demand (tier_demand.h: their resident sequences' paces, and their queued prompts by
// their deadlines or the prefill they computed lately) leaves, less the switching overhead, and
// never less than the large model's guaranteed share: limits.large_min under policy.split:
// demand, else its weighted share (with the overload ladder's weight shift).
double DecodePaceReservation::pace_budget(const SchedulerView& state, const SharePlan& plan) const {
  const double guaranteed =
      guaranteed_large_share(limits_, demand_split_, state.overload().large_weight_factor);
  return std::max(guaranteed, 1.0 - plan.limits.switch_overhead - plan.small.total());
}

double guaranteed_large_share(const ShareLimits& limits, bool demand_split,
                              double large_weight_factor) {
  if (demand_split) return limits.large_min;
  const double large_weight = limits.large_weight * large_weight_factor;
  return large_weight / (large_weight + limits.small_weight);
}

double lone_pace_need(const CostModel& cost, Duration tpot) {
  return to_seconds(lone_decode_step(cost)) / to_seconds(tpot);
}

}  // namespace gangway
