#include "sched/admission_gate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "sched/lease_calendar.h"

namespace gangway {

namespace {

// Share of the GPUs' time a tier is assumed to get when nothing has been measured yet, and the
// least it is assumed to get (so a prediction never divides by nearly zero).
constexpr double kLeastShare = 0.05;
// Time constant of the admitted work rates.
constexpr double kRateWindow_s = 1.0;
// Queued entries walked to find the work ahead of a newcomer; past it the per-class sums stand
// in (a queue that long is far over any target the walk could still distinguish).
constexpr int kMostEntriesWalked = 64;

Duration scaled(Duration d, double factor) {
  return seconds_to_duration(to_seconds(d) * factor);
}

}  // namespace

AdmissionGate::AdmissionGate(const NodeSpec& node, const SchedulerOptions& options,
                             SchedulerState& state, const TtftPredictor& predictor)
    : node_(node),
      options_(options),
      state_(state),
      predictor_(predictor),
      controller_(node, options.admission),
      ordering_(node, options.admission, predictor),
      admitted_tokens_(node.models.size() * node.slo_classes.size()) {}

AdmissionQuery AdmissionGate::query(const Sequence& seq, Time now) const {
  AdmissionQuery query;
  const ModelSpec& model = node_.model(seq.spec.model);
  query.queued_same_class =
      state_.queued_by_class[seq.spec.model.value()][seq.spec.slo_class.value()];
  query.no_capacity = !state_.has_capacity(model.id);
  if (query.no_capacity || !controller_.enabled()) return query;
  if (model.is_large()) {
    predict_large_ttft(seq, now, query);
  } else {
    predict_small_ttft(seq, now, query);
  }
  const Duration correction = controller_.correction(model.id, seq.spec.slo_class, now);
  query.predicted_wait += correction;
  query.predicted_ttft += correction;
  return query;
}

// Under least-slack order the requests queued under a smaller key go first, whatever their
// class: a standard request that has waited long enough goes ahead of an interactive newcomer.
// The queue is walked from its head up to the newcomer's key; a walk cut short falls back to
// the queued tokens of the classes as tight as the newcomer's (every class in arrival order).
AdmissionGate::WorkAhead AdmissionGate::work_ahead(const RequestQueue& queue, const Sequence& seq,
                                                   int64_t key) const {
  // Nothing ahead in an empty queue (a replica's own queue, under late binding, nearly always).
  if (queue.empty()) return WorkAhead{};
  WorkAhead walked;
  bool complete = false;
  if (ordering_.by_slack() && options_.admission.keep_promises) {
    complete = true;
    for (const auto& entry : queue) {
      if (std::get<0>(entry) > key) break;
      if (walked.requests == kMostEntriesWalked) {
        complete = false;
        break;
      }
      ++walked.requests;
      walked.tokens += state_.sequences[std::get<2>(entry)].queue_tokens;
    }
  }
  if (complete) return walked;
  WorkAhead ahead;
  for (const SloClassId first : ordering_.served_before(seq.spec.slo_class)) {
    ahead.tokens += queue.queued_tokens(first);
  }
  ahead.tokens = std::max(ahead.tokens, walked.tokens);
  // As many requests as those tokens make at the queue's mean prompt.
  ahead.requests = std::max(
      walked.requests,
      static_cast<int64_t>(static_cast<double>(ahead.tokens) * static_cast<double>(queue.size()) /
                           static_cast<double>(std::max<int64_t>(1, queue.queued_tokens()))));
  return ahead;
}

AdmissionGate::Overtakers AdmissionGate::overtakers(const Sequence& seq, Time now) const {
  Overtakers found;
  if (!options_.admission.keep_promises) return found;
  for (const SloClass& later : node_.slo_classes) {
    const Duration window = ordering_.overtaking_window(seq.spec.slo_class, later.id);
    if (window <= Duration(0) || found.count == found.classes.size()) continue;
    const double rate = admitted_token_rate(seq.spec.model, later.id, now);
    if (rate <= 0) continue;
    found.classes[found.count++] = {rate, to_seconds(window)};
  }
  return found;
}

Duration AdmissionGate::overtaken(const Overtakers& overtakers, Duration wait,
                                  double seconds_per_token, int64_t engines) {
  if (overtakers.count == 0) return Duration(0);
  const auto spread = static_cast<double>(std::max<int64_t>(1, engines));
  // The wait W solves W = wait + sum of load x min(W, window): the work that arrives while the
  // newcomer waits and still goes ahead of it. Iterated from W = wait; it only grows, and is
  // bounded by wait + sum of load x window.
  const double base_s = to_seconds(wait);
  double w = base_s;
  for (int i = 0; i < 16; ++i) {
    double next = base_s;
    for (size_t k = 0; k < overtakers.count; ++k) {
      const Overtaker& later = overtakers.classes[k];
      const double load = later.tokens_per_s * seconds_per_token / spread;  // work per second
      next += load * std::min(w, later.window_s);
    }
    if (next - w < 1e-6) {
      w = next;
      break;
    }
    w = next;
  }
  return seconds_to_duration(w - base_s);
}

double AdmissionGate::admitted_token_rate(ModelId model, SloClassId slo_class, Time now) const {
  const DecayedCount& count = admitted_tokens_[rate_index(model, slo_class)];
  if (count.tokens <= 0) return 0;
  const double age_s = now > count.at ? to_seconds(now - count.at) : 0.0;
  return count.tokens * std::exp(-age_s / kRateWindow_s) / kRateWindow_s;
}

void AdmissionGate::note_admitted(const Sequence& seq, Time now) {
  if (!options_.admission.keep_promises) return;  // the rates serve only overtakers()
  DecayedCount& count = admitted_tokens_[rate_index(seq.spec.model, seq.spec.slo_class)];
  const double age_s = now > count.at ? to_seconds(now - count.at) : 0.0;
  // The prefill work it brings where it was queued: its prompt net of that engine's caches.
  count.tokens = count.tokens * std::exp(-age_s / kRateWindow_s) + seq.queue_tokens;
  count.at = now;
}

// On each replica: the rest of the iteration in flight and the gang's blackout (as the router
// sees them), then the prefill work ahead of it and its own, in iterations of the batch that
// replica runs now: its resident sequences decode one token each per iteration and prefill gets
// the rest of the token budget, at the cost model's time for such an iteration (decode-heavy
// batches are slower than a prefill chunk alone, which the router's lone-chunk rate ignores).
// Queued work is stretched by the share of time the gang takes under contention, and all of it
// by the GPU's measured slowdown. The best replica's figures are the request's.
void AdmissionGate::predict_small_ttft(const Sequence& seq, Time now, AdmissionQuery& query) const {
  const double gang_share = std::min(state_.gang.contended_share, 1.0 - kLeastShare);
  const double stretch = 1.0 / (1.0 - gang_share);
  const ModelSpec& model = node_.model(seq.spec.model);
  const CostModel& cost = *state_.small_models[model.id.value()].cost;
  const int64_t key = ordering_.key(seq);
  const Overtakers later_first = overtakers(seq, now);
  const int32_t budget = model.max_batched_tokens;
  // The model's shared (late-binding) queue is the same for every replica: walked once.
  const SmallModelRuntime& runtime = state_.small_models[seq.spec.model.value()];
  const auto replicas = static_cast<int64_t>(runtime.replicas.size());
  const WorkAhead shared_queue = work_ahead(runtime.queue, seq, key);
  // The gang's blackout is the same on every replica.
  const Duration blackout = predictor_.blackout(state_, now);
  // Promise mode counts the leases that land in the newcomer's wait one by one.
  const std::optional<LeaseCalendar> leases =
      options_.admission.keep_promises && state_.large
          ? LeaseCalendar::of(state_.gang, state_.has_large_work(), gang_share, blackout, now)
          : std::nullopt;
  if (iteration_memo_.size() < state_.replicas.size()) {
    iteration_memo_.resize(state_.replicas.size());
  }
  bool found = false;
  // The request's own part depends on a replica only through the prefix it holds: replicas
  // holding as much as the last one share its figures (most hold none of a fresh prompt).
  TtftEstimate own;
  int32_t own_gpu_blocks = -1;
  int32_t own_host_blocks = -1;
  for (uint32_t index : runtime.replicas) {
    const Replica& replica = state_.replicas[index];
    const GpuRuntime& gpu = state_.gpus[replica.gpu.value()];
    if (gpu.failed) continue;
    int32_t gpu_blocks = 0;
    int32_t host_blocks = 0;
    predictor_.cached_blocks(state_, replica, seq, gpu_blocks, host_blocks);
    if (gpu_blocks != own_gpu_blocks || host_blocks != own_host_blocks) {
      own = predictor_.own_part(state_, replica.model, seq, gpu_blocks, host_blocks);
      own_gpu_blocks = gpu_blocks;
      own_host_blocks = host_blocks;
    }
    const Duration base = TtftPredictor::in_flight_rest(gpu, now) + blackout;
    const auto decodes = static_cast<int32_t>(replica.running.size());
    const int32_t prefill_per_iteration = std::max(budget - decodes, std::max(1, budget / 8));
    const int64_t context_tokens = replica.kv.used_blocks() * node_.kv_block_tokens;
    IterationMemo& memo = iteration_memo_[index];
    if (!memo.valid || memo.decodes != decodes || memo.context_tokens != context_tokens) {
      BatchShape shape;
      shape.prefill_tokens = prefill_per_iteration;
      shape.prefill_seqs = 1;
      shape.decode_seqs = decodes;
      shape.decode_context_tokens = context_tokens;
      memo = IterationMemo{true, decodes, context_tokens, to_seconds(cost.iteration_time(shape))};
    }
    const double iteration_s = memo.iteration_s;
    // Its own queue and resident prefill, and its share of the model's shared queue.
    const WorkAhead own_queue = work_ahead(replica.queue, seq, key);
    const int64_t spread = std::max<int64_t>(1, replicas);
    const int64_t ahead =
        own_queue.tokens + replica.resident_prefill_tokens + shared_queue.tokens / spread;
    // Prefill work ahead, or the batch slots: a request starts only once a slot is free, and
    // with short prompts and long outputs the slots, not the prefill, set the wait. Each
    // resident sequence frees its slot after about the mean output length in iterations.
    const double prefill_s = static_cast<double>(ahead) / prefill_per_iteration * iteration_s;
    const int64_t requests_ahead = own_queue.requests + shared_queue.requests / spread;
    const int64_t departures_needed = requests_ahead + 1 - (model.max_num_seqs - decodes);
    double slots_s = 0;
    if (departures_needed > 0 && options_.admission.keep_promises) {
      slots_s = static_cast<double>(departures_needed) * state_.predictor.expected_remaining(seq) *
                iteration_s / std::max(1, decodes);
    }
    const double work_s = std::max(prefill_s, slots_s);
    const int32_t own_tokens = std::max(1, seq.prefill_target_tokens - own.cached_tokens());
    // Whole iterations: the integer ceiling equals std::ceil of the exact quotient here (both
    // operands are far below 2^53).
    const int64_t own_iterations =
        (static_cast<int64_t>(own_tokens) + prefill_per_iteration - 1) / prefill_per_iteration;
    const double own_s = static_cast<double>(own_iterations) * iteration_s;
    // With work ahead, the calendar's leases take the place of the mean share's stretch (with
    // none, the request starts at once and neither applies). The wait the overload ladder reads
    // stays the expected one.
    const bool on_calendar = leases && work_s > 0;
    Duration wait =
        scaled(base + seconds_to_duration(work_s * (on_calendar ? 1.0 : stretch)), gpu.slowdown);
    wait += overtaken(later_first, wait,
                      iteration_s / prefill_per_iteration * stretch * gpu.slowdown, replicas);
    Duration ttft = wait + own.load + seconds_to_duration(own_s * gpu.slowdown);
    if (on_calendar) ttft += leases->delay_before(now + ttft);
    if (!found || own.prefill < query.idle_ttft) query.idle_ttft = own.prefill;
    if (!found || ttft < query.predicted_ttft) {
      query.predicted_ttft = ttft;
      query.predicted_wait = wait;
      found = true;
    }
  }
}

// The large model: until the gang can start (the barrier: the last busy GPU's boundary; the
// arbiter starts a phase early for work whose slack runs out, and the learned correction covers
// the usual gap when it does not), then the large prefill work ahead of it and its own, stretched
// by the share of time the gang gets under contention.
void AdmissionGate::predict_large_ttft(const Sequence& seq, Time now, AdmissionQuery& query) const {
  const GangRuntime& gang = state_.gang;
  const LargeModelRuntime& large = *state_.large;
  Duration start{0};
  if (gang.phase != GangPhase::kActive) {
    start = state_.gang_barrier(now) - now;
  } else if (large.busy && large.predicted_free > now) {
    start = large.predicted_free - now;
  }
  const double share = std::clamp(gang.contended_share, kLeastShare, 1.0);
  // With the gang active, the work ahead runs now; otherwise at the gang's share of time.
  const double stretch = gang.phase == GangPhase::kActive ? 1.0 : 1.0 / share;
  const double seconds_per_token = predictor_.seconds_per_prefill_token(seq.spec.model);
  const auto ahead = static_cast<double>(work_ahead(large.queue, seq, ordering_.key(seq)).tokens +
                                         large.resident_prefill_tokens);
  const Duration work = seconds_to_duration(ahead * seconds_per_token * stretch);
  const Duration own = predictor_.prefill_time(state_, seq.spec.model, seq.spec.prompt_tokens, 0);
  query.predicted_wait = scaled(start + work, large.slowdown);
  query.predicted_wait += overtaken(overtakers(seq, now), query.predicted_wait,
                                    seconds_per_token / share * large.slowdown, 1);
  query.predicted_ttft = query.predicted_wait + scaled(own, large.slowdown);
  query.idle_ttft = own;
}

bool AdmissionGate::observe_pressure(ModelId model, const AdmissionQuery& query, Time now) {
  const double pressure =
      to_seconds(query.predicted_wait) / to_seconds(controller_.tightest_target());
  return controller_.observe_pressure(model, pressure, now);
}

AdmissionVerdict AdmissionGate::decide(const RequestSpec& spec, const AdmissionQuery& query,
                                       Time now) {
  const AdmissionVerdict verdict = controller_.decide(spec, query, now);
  if (!verdict.admit && says_node_busy(verdict.reason)) {
    state_.overload.last_busy_rejection = now;
  }
  return verdict;
}

const std::vector<SequenceHandle>& AdmissionGate::shed_victims() {
  victims_.clear();
  auto collect = [&](const RequestQueue& queue) {
    for (const auto& entry : queue) {
      const SequenceHandle h = std::get<2>(entry);
      const Sequence& seq = state_.sequences[h];
      if (seq.swapped || seq.generated_tokens > 0) continue;
      if (options_.admission.keep_promises && holds_promise(seq)) continue;
      if (controller_.sheds(seq.spec.slo_class)) victims_.push_back(h);
    }
  };
  if (state_.large) collect(state_.large->queue);
  for (const SmallModelRuntime& model : state_.small_models) collect(model.queue);
  for (const Replica& replica : state_.replicas) collect(replica.queue);
  return victims_;
}

bool AdmissionGate::holds_promise(const Sequence& seq) const {
  if (seq.downgraded_from) return false;
  return node_.slo_class(seq.spec.slo_class).ttft_target.has_value() ||
         seq.spec.ttft_deadline.has_value();
}

void AdmissionGate::publish_overload(Time now) {
  state_.overload.level = controller_.level();
  state_.overload.pressure = controller_.pressure();
  if (controller_.update_weight_shift(now)) {
    state_.overload.large_weight_factor = controller_.large_weight_factor();
  }
}

SequenceHandle AdmissionGate::priority_victim(const Replica& replica) const {
  if (!controller_.enabled() || !options_.admission.priority_preemption) return kNoSequence;
  if (replica.running.empty()) return kNoSequence;
  const RequestQueue* queue = !replica.queue.empty() ? &replica.queue : nullptr;
  const RequestQueue& shared = state_.small_models[replica.model.value()].queue;
  if (queue == nullptr && !shared.empty()) queue = &shared;
  if (queue == nullptr) return kNoSequence;
  const Sequence& head = state_.sequences[queue->front()];
  if (!controller_.most_important(head.spec.slo_class) ||
      controller_.least_important(head.spec.slo_class)) {
    return kNoSequence;
  }
  const ModelSpec& model = node_.model(replica.model);
  const int64_t first_chunk = std::min(head.spec.prompt_tokens, model.prefill_chunk_tokens);
  const bool slots_full =
      static_cast<int64_t>(replica.running.size()) >= static_cast<int64_t>(model.max_num_seqs);
  const bool memory_short =
      blocks_for_tokens(first_chunk, node_.kv_block_tokens) > replica.kv.available_blocks();
  if (!slots_full && !memory_short) return kNoSequence;
  SequenceHandle victim = kNoSequence;
  for (SequenceHandle h : replica.running) {
    const Sequence& seq = state_.sequences[h];
    if (seq.in_flight || !controller_.least_important(seq.spec.slo_class)) continue;
    if (victim == kNoSequence || seq.kv_tokens < state_.sequences[victim].kv_tokens) victim = h;
  }
  return victim;
}

void AdmissionGate::note_finished(const Sequence& seq, const RequestRecord& record, Time now) {
  if (seq.predicted_ttft && record.first_token && !seq.downgraded_from) {
    // A promise when its class or the request itself has a TTFT target: kept when it met its
    // whole SLO (a decode too slow for its TPOT target breaks it as a late first token does).
    std::optional<bool> promise_kept;
    if (options_.admission.keep_promises && holds_promise(seq))
      promise_kept = record.outcome == Outcome::kCompleted && record.slo_met;
    controller_.note_prediction(seq.spec.model, seq.spec.slo_class, *seq.predicted_ttft,
                                *record.ttft(), promise_kept, now);
  }
  note_slo_outcome(record, now);
}

// Completed requests count on time or not by their SLO; rejections count as misses when they
// say the node was busy (late, shed, queue full); other outcomes (bad requests, rate limits,
// no capacity, cancellations, failures) say nothing about the share of the node a tier gets.
void AdmissionGate::note_slo_outcome(const RequestRecord& record, Time now) {
  if (!controller_.enabled() || !options_.admission.weight_shift.enabled) return;
  if (record.model.value() >= node_.models.size()) return;
  const bool large = node_.model(record.model).is_large();
  if (record.outcome == Outcome::kCompleted) {
    controller_.note_slo_outcome(record.slo_class, large, record.slo_met, now);
  } else if (record.outcome == Outcome::kRejected && says_node_busy(record.reason)) {
    controller_.note_slo_outcome(record.slo_class, large, false, now);
  } else {
    return;
  }
  if (controller_.update_weight_shift(now)) {
    state_.overload.large_weight_factor = controller_.large_weight_factor();
  }
}

bool AdmissionGate::deferred(const Sequence& seq) const {
  if (deferral_lifted_ || !controller_.defers(seq.spec.slo_class)) return false;
  const std::vector<int64_t>& queued = state_.queued_by_class[seq.spec.model.value()];
  for (size_t c = 0; c < queued.size(); ++c) {
    if (queued[c] > 0 && !controller_.defers(SloClassId(static_cast<uint8_t>(c)))) return true;
  }
  return false;
}

}  // namespace gangway
