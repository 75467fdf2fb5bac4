#include "sched/policies/tier_urgency.h"

#include <algorithm>
#include <cmath>

#include "sched/policies/tier_demand.h"

namespace gangway {

namespace {

// How many queue heads the urgency checks look at (queues can be long; heads are the oldest).
constexpr int kHeadsChecked = 8;

}  // namespace

void TierUrgency::initialise(const SchedulerView& state) {
  if (state.large()) {
    const ModelSpec& model = state.node().model(state.large()->model);
    BatchShape chunk;
    chunk.prefill_tokens = model.prefill_chunk_tokens;
    chunk.prefill_seqs = 1;
    large_chunk_time_ = state.large()->cost->iteration_time(chunk);
  }
  first_token_memo_ = UrgencyMemo{};
  decode_memo_ = {};
  small_latest_start_.assign(state.gpus().size(), Time::max());
  small_last_step_.assign(state.gpus().size(), Duration(0));
  // Resident large sequences of a class without a TPOT target are still owed progress: they are
  // paced at a multiple of the loosest TPOT target any class sets (docs/gang-scheduling.md).
  const std::optional<Duration> unpaced = DemandModel::unpaced_pace(state.node());
  target_pace_.assign(state.node().slo_classes.size(), std::nullopt);
  owed_pace_.assign(state.node().slo_classes.size(), unpaced);
  for (const SloClass& slo : state.node().slo_classes) {
    if (!slo.tpot_target) continue;
    target_pace_[slo.id.value()] = slo.tpot_target;
    owed_pace_[slo.id.value()] = slo.tpot_target;
  }
  small_prefill_ns_per_token_.assign(state.node().models.size(), 0.0);
  for (const ModelSpec& model : state.node().models) {
    if (model.is_large()) continue;
    BatchShape chunk;
    chunk.prefill_tokens = model.prefill_chunk_tokens;
    chunk.prefill_seqs = 1;
    small_prefill_ns_per_token_[model.id.value()] =
        static_cast<double>(
            state.small_models()[model.id.value()].cost->iteration_time(chunk).count()) /
        model.prefill_chunk_tokens;
  }
}

void TierUrgency::on_small_iteration(const SchedulerView& state, GpuId gpu_id, Duration step) {
  const size_t gpu = gpu_id.value();
  small_last_step_[gpu] = step;
  // Only gang decisions read it. While the large model has no work it is left to be computed
  // when first read (earliest_small_urgency): it is a pass over every resident sequence, which a
  // node serving only small work would otherwise pay at every iteration.
  if (state.has_large_work()) {
    small_latest_start_[gpu] = latest_small_start(state, state.gpus()[gpu], step);
  } else {
    small_latest_start_[gpu].reset();
  }
}

Duration TierUrgency::longest_small_step() const {
  Duration longest(0);
  for (Duration step : small_last_step_) longest = std::max(longest, step);
  return longest;
}

// When `seq` needs its first token: its own deadline, else its class's TTFT target after its
// arrival; none for a class without a TTFT target.
std::optional<Time> TierUrgency::first_token_due(const SchedulerView& state,
                                                 const Sequence& seq) const {
  if (seq.spec.ttft_deadline) return seq.spec.ttft_deadline;
  const std::optional<Duration> target = state.node().slo_class(seq.spec.slo_class).ttft_target;
  if (!target) return std::nullopt;
  return seq.spec.arrival + *target;
}

// The latest time the gang may start for the large sequence `seq` to finish its prompt, one
// chunk per large iteration, by its first-token deadline; none without a deadline.
std::optional<Time> TierUrgency::large_prefill_latest_start(const SchedulerView& state,
                                                            const Sequence& seq) const {
  const std::optional<Time> due = first_token_due(state, seq);
  if (!due) return std::nullopt;
  const double chunks = std::ceil(static_cast<double>(seq.remaining_prefill_tokens()) /
                                  state.node().model(seq.spec.model).prefill_chunk_tokens);
  const Duration prefill(static_cast<int64_t>(chunks * large_chunk_time_.count()));
  return *due - prefill - urgency_margin_;
}

Time TierUrgency::earliest_large_urgency(const SchedulerView& state) const {
  return std::min(large_first_token_urgency(state), large_decode_urgency(state));
}

Time TierUrgency::large_first_token_urgency(const SchedulerView& state,
                                            std::optional<Time> not_before) const {
  if (not_before) return compute_first_token_urgency(state, not_before);
  return first_token_memo_.value_for(
      state, [&] { return compute_first_token_urgency(state, std::nullopt); });
}

Time TierUrgency::compute_first_token_urgency(const SchedulerView& state,
                                              std::optional<Time> not_before) const {
  Time latest_start = Time::max();
  auto consider = [&](const Sequence& seq) {
    if (const std::optional<Time> start = large_prefill_latest_start(state, seq)) {
      if (!not_before || *start >= *not_before) latest_start = std::min(latest_start, *start);
    }
  };
  int checked = 0;
  for (const auto& entry : state.large()->queue) {
    if (++checked > kHeadsChecked) break;
    consider(state.sequence(std::get<2>(entry)));
  }
  for (SequenceHandle h : state.large()->running) {
    const Sequence& seq = state.sequence(h);
    if (!seq.first_token) consider(seq);
  }
  return latest_start;
}

// A sequence's next token is due when its mean TPOT so far would otherwise exceed its class's
// target, or for a class without one, the pace owed (owed_pace_). A sequence banks no slack
// against its predicted remaining length: with geometric-like lengths that prediction is wrong
// for exactly the long sequences, which would then miss their pace. No urgency_margin here,
// unlike first tokens: the pace already assumes no banked slack, the callers add the barrier, and
// a token a little after its pace point is made up within the lease (the target bounds the mean).
// With the margin the large model ran ahead of its pace at the small models' TPOT
// (docs/gang-scheduling.md, "Decode pace").
Time TierUrgency::large_decode_urgency(const SchedulerView& state, bool targets_only) const {
  return decode_memo_[targets_only ? 1 : 0].value_for(
      state, [&] { return compute_decode_urgency(state, targets_only); });
}

Time TierUrgency::compute_decode_urgency(const SchedulerView& state, bool targets_only) const {
  const std::vector<std::optional<Duration>>& pace = targets_only ? target_pace_ : owed_pace_;
  Time earliest_due = Time::max();
  for (SequenceHandle h : state.large()->running) {
    const Sequence& seq = state.sequence(h);
    if (!seq.first_token) continue;
    const std::optional<Duration>& tpot = pace[seq.spec.slo_class.value()];
    if (!tpot) continue;
    earliest_due = std::min(earliest_due, *seq.first_token + *tpot * seq.generated_tokens);
  }
  // The latest start is the earliest due less one large iteration (the same for every sequence).
  return earliest_due == Time::max() ? earliest_due : earliest_due - state.large()->last_iteration;
}

// For queued requests (queue heads), TTFT deadline minus the prefill of the small requests
// queued ahead of them (the model's queued prompt tokens over its replicas); for resident ones,
// latest_small_start() as computed when their GPU last finished an iteration (or, if the large
// model had no work then, when first read since).
Time TierUrgency::earliest_small_urgency(const SchedulerView& state) const {
  Time latest = Time::max();
  for (size_t gpu = 0; gpu < small_latest_start_.size(); ++gpu) {
    if (!small_latest_start_[gpu]) {
      small_latest_start_[gpu] =
          latest_small_start(state, state.gpus()[gpu], small_last_step_[gpu]);
    }
    latest = std::min(latest, *small_latest_start_[gpu]);
  }
  auto consider = [&](const RequestQueue& queue, Duration backlog) {
    int checked = 0;
    for (const auto& entry : queue) {
      if (++checked > kHeadsChecked) break;
      const Sequence& seq = state.sequence(std::get<2>(entry));
      if (const std::optional<Time> due = first_token_due(state, seq)) {
        latest = std::min(latest, *due - backlog - urgency_margin_);
      }
    }
  };
  for (const SmallModelRuntime& model : state.small_models()) {
    if (state.node().model(model.model).is_large()) continue;
    const double replicas = std::max<size_t>(1, model.replicas.size());
    const Duration backlog(static_cast<int64_t>(
        small_prefill_ns_per_token_[model.model.value()] *
        static_cast<double>(state.queued_prompt_tokens(model.model)) / replicas));
    consider(model.queue, backlog);
    for (uint32_t index : model.replicas) consider(state.replicas()[index].queue, backlog);
  }
  return latest;
}

// The latest time small sequences resident on `gpu` can resume and still meet their targets:
// TTFT for those part-way through prefill, mean TPOT for those decoding. A decoding sequence
// may bank slack: it must resume when finishing its remaining tokens back to back would only
// just keep its mean TPOT within the target, were it to end as early as its 20th-percentile
// remaining length. (By the mean remaining length, ~30 tokens at any age for geometric-like
// lengths, every sequence seemed a second from its deadline, and those that ended a few tokens
// after a run of long leases missed; by the 10th percentile, or by the pace as for the large
// model, their deadlines cut so many leases that the large model's TPOT paid:
// docs/gang-scheduling.md, "Small sequences' TPOT".) Exclusive mode does not pause decoding
// small sequences for the gang (a drain lets them finish and evicts only overruns), so there
// the mean remaining length serves. `step` is the GPU's iteration time. Computed when the GPU
// finishes an iteration: it stays valid while the GPU is paused.
Time TierUrgency::latest_small_start(const SchedulerView& state, const GpuRuntime& gpu,
                                     Duration step) const {
  // Read once: the predictor's calls are opaque to the compiler, which would otherwise load
  // these again for every sequence.
  const std::vector<SloClass>& classes = state.node().slo_classes;
  const OutputLengthPredictor& predictor = state.predictor();
  const bool lease = mode_ == ExecutionMode::kLease;
  const auto step_ns = static_cast<double>(step.count());
  const Duration margin = urgency_margin_;
  Time latest = Time::max();
  for (uint32_t index : gpu.replicas) {
    const Replica& replica = state.replicas()[index];
    const int32_t chunk_tokens = state.node().model(replica.model).prefill_chunk_tokens;
    for (SequenceHandle h : replica.running) {
      const Sequence& seq = state.sequence(h);
      const SloClass& slo = classes[seq.spec.slo_class.value()];
      if (!seq.first_token) {
        if (!slo.ttft_target) continue;
        const double chunks =
            std::ceil(static_cast<double>(seq.remaining_prefill_tokens()) / chunk_tokens);
        latest = std::min(latest, seq.spec.arrival + *slo.ttft_target -
                                      Duration(static_cast<int64_t>(chunks * step_ns)) - margin);
        continue;
      }
      if (!slo.tpot_target) continue;
      const double remaining =
          lease ? predictor.short_remaining(seq) : predictor.expected_remaining(seq);
      const Time finish_deadline =
          *seq.first_token +
          Duration(static_cast<int64_t>(static_cast<double>(slo.tpot_target->count()) *
                                        (seq.generated_tokens + remaining - 1)));
      latest = std::min(
          latest, finish_deadline - Duration(static_cast<int64_t>(remaining * step_ns)) - margin);
    }
  }
  return latest;
}

}  // namespace gangway
