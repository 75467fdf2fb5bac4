// The scheduler's event front door (sched/scheduler.h): arrivals, iteration completions,
// cancellations and timers, and the decision pass each one ends with. Its parts live beside it
// (kv_manager, batch_builder, gang_phase_machine, admission_gate, preemption, engine_faults,
// invariants); what stays here is the order in which one event drives them, kept in one file so
// that a reader can follow an event from start to end.

#include "sched/scheduler.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "sched/router_registry.h"
#include "sched/ttft_predictor.h"

namespace gangway {

namespace {

// Smoothed measured/predicted iteration time (weight 1/8 on the newest), bounded so that one
// freak iteration cannot make predictions absurd.
double next_slowdown(double slowdown, Time start, Time predicted_end, Time end) {
  const double predicted = to_seconds(predicted_end - start);
  if (predicted <= 0) return slowdown;
  const double ratio = std::clamp(to_seconds(end - start) / predicted, 0.25, 16.0);
  return slowdown + (ratio - slowdown) / 8;
}

}  // namespace

Scheduler::Scheduler(const NodeSpec& node, SchedulerOptions options,
                     std::unique_ptr<GangPolicy> policy, std::unique_ptr<Router> router)
    : node_(node),
      options_(std::move(options)),
      policy_(std::move(policy)),
      router_(router ? std::move(router) : make_router(options_.routing)),
      gate_(node_, options_, state_, predictor_),
      kv_(node_, options_, state_),
      batches_(node_, options_, state_, kv_, gate_, *policy_, cost_models_, *this),
      gang_(state_, *policy_, effects_, *this) {
  state_.node = &node_;
  state_.predictor =
      OutputLengthPredictor(static_cast<int>(node_.models.size()),
                            options_.prior_mean_output_tokens, options_.oracle_predictor);
  state_.prediction_accuracy.resize(node_.models.size());
  state_.queued_by_class.assign(node_.models.size(),
                                std::vector<int64_t>(node_.slo_classes.size(), 0));
  state_.running_by_class = state_.queued_by_class;
  state_.queued_prompt_tokens.assign(node_.models.size(), 0);
  for (const ModelSpec& model : node_.models) {
    cost_models_.push_back(make_cost_model(model, node_.hardware));
  }
  state_.gpus.resize(node_.gpu_count);
  for (int g = 0; g < node_.gpu_count; ++g) state_.gpus[g].id = GpuId(g);
  state_.small_models.resize(node_.models.size());
  for (const ModelSpec& model : node_.models) {
    SmallModelRuntime& runtime = state_.small_models[model.id.value()];
    runtime.model = model.id;
    runtime.cost = cost_models_[model.id.value()].get();
    if (model.is_large()) {
      LargeModelRuntime large;
      large.model = model.id;
      large.cost = cost_models_[model.id.value()].get();
      state_.large = std::move(large);
      continue;
    }
    for (GpuId gpu : model.gpus) {
      Replica replica;
      replica.model = model.id;
      replica.gpu = gpu;
      const auto index = static_cast<uint32_t>(state_.replicas.size());
      state_.replicas.push_back(std::move(replica));
      runtime.replicas.push_back(index);
      state_.gpus[gpu.value()].replicas.push_back(index);
    }
  }
  kv_.create_pools();
  predictor_.initialise(state_);
}

Scheduler::~Scheduler() = default;

SequenceHandle Scheduler::allocate_sequence(const RequestSpec& spec) {
  SequenceHandle handle;
  if (!free_handles_.empty()) {
    handle = free_handles_.back();
    free_handles_.pop_back();
  } else {
    handle = static_cast<SequenceHandle>(state_.sequences.size());
    state_.sequences.emplace_back();
  }
  Sequence& seq = state_.sequences[handle];
  // A reused slot keeps its block list's and its prefix hashes' storage: the copy of the spec
  // fills the old hash storage when it fits, so steady state allocates nothing for either.
  std::vector<BlockId> blocks = std::move(seq.blocks);
  blocks.clear();
  std::vector<BlockHash> prefix_blocks = std::move(seq.spec.prefix_blocks);
  seq = Sequence{};
  seq.blocks = std::move(blocks);
  seq.spec.prefix_blocks = std::move(prefix_blocks);
  seq.spec = spec;
  seq.state = SequenceState::kQueued;
  seq.large = node_.model(spec.model).is_large();
  seq.prefill_target_tokens = spec.prompt_tokens;
  handle_by_id_.emplace(spec.id, handle);
  ++state_.live_sequences;
  return handle;
}

void Scheduler::reject(const RequestSpec& spec, Reason reason, Time now) {
  effects_.finished.push_back(rejected_record(spec, reason, now));
  gate_.note_rejected(effects_.finished.back(), now);
}

SubmitResult Scheduler::submit(const RequestSpec& spec, Time now) {
  SubmitResult result;
  const bool known_model = spec.model.value() < node_.models.size();
  const bool known_class = spec.slo_class.value() < node_.slo_classes.size();
  if (!known_model || !known_class || spec.prompt_tokens < 1 || spec.max_tokens < 1 ||
      handle_by_id_.count(spec.id) > 0) {
    reject(spec, Reason::kBadRequest, now);
    after_event(now);
    return result;
  }
  const ModelSpec& model = node_.model(spec.model);
  const int64_t context_tokens = static_cast<int64_t>(spec.prompt_tokens) + spec.max_tokens;
  if (context_tokens > model.max_context_tokens ||
      blocks_for_tokens(context_tokens, node_.kv_block_tokens) > kv_.largest_pool_blocks(model)) {
    reject(spec, Reason::kBadRequest, now);
    after_event(now);
    return result;
  }
  if (const std::optional<AdmissionVerdict> limited = gate_.screen(spec, now)) {
    reject(spec, limited->reason, now);
    effects_.finished.back().retry_after = limited->retry_after;
    after_event(now);
    return result;
  }
  const SequenceHandle handle = allocate_sequence(spec);
  {
    Sequence& seq = state_.sequences[handle];
    // Not queued anywhere until admitted: shedding (below) must not take it for a queued one.
    seq.state = SequenceState::kFinished;
    AdmissionQuery query = gate_.query(seq, now);
    if (model.is_large() && gate_.controller().enabled() && !query.no_capacity &&
        node_.slo_class(spec.slo_class).tpot_target) {
      query.pace_retry_after = policy_->large_pace_refusal(state_, seq, now);
    }
    if (gate_.samples_pressure(query)) {
      if (gate_.observe_pressure(spec.model, query, now)) shed_queued(now);
      gate_.publish_overload(now);
    }
    const AdmissionVerdict verdict = gate_.decide(spec, query, now);
    if (!verdict.admit) {
      discard_sequence(handle);
      reject(spec, verdict.reason, now);
      effects_.finished.back().retry_after = verdict.retry_after;
      after_event(now);
      return result;
    }
    if (verdict.slo_class != spec.slo_class) {
      seq.downgraded_from = spec.slo_class;
      seq.spec.slo_class = verdict.slo_class;
    }
    seq.spec.max_tokens = verdict.max_tokens;
    if (gate_.controller().enabled()) seq.predicted_ttft = query.predicted_ttft;
  }
  state_.count_transition(state_.sequences[handle], SequenceState::kFinished,
                          SequenceState::kQueued);
  if (model.is_large()) {
    enqueue_large(handle);
  } else {
    enqueue_small(handle, now);
  }
  // After queueing: its work counts net of the caches where it was queued.
  gate_.note_admitted(state_.sequences[handle], now);
  result.accepted = true;
  result.handle = handle;
  decide(now);
  after_event(now);
  return result;
}

void Scheduler::enqueue_small(SequenceHandle handle, Time now) {
  Sequence& seq = state_.sequences[handle];
  seq.state = SequenceState::kQueued;
  const int64_t key = gate_.ordering().key(seq);
  std::optional<uint32_t> replica = router_->route(state_, seq, now);
  if (replica && state_.gpus[state_.replicas[*replica].gpu.value()].failed) {
    // Routers know nothing of failures: take the healthy replica with the least queued work.
    replica.reset();
    int64_t least = 0;
    for (uint32_t index : state_.small_models[seq.spec.model.value()].replicas) {
      const Replica& candidate = state_.replicas[index];
      if (state_.gpus[candidate.gpu.value()].failed) continue;
      const int64_t queued = static_cast<int64_t>(candidate.queue.size());
      if (!replica || queued < least) {
        replica = index;
        least = queued;
      }
    }
  }
  if (replica) {
    seq.gpu = state_.replicas[*replica].gpu;
    seq.queued_replica = *replica;
    Replica& bound = state_.replicas[*replica];
    bound.queue.push(handle, seq, key, TtftPredictor::cached_tokens(state_, bound, seq));
  } else {
    seq.gpu.reset();
    seq.queued_replica = kNoReplica;
    state_.small_models[seq.spec.model.value()].queue.push(handle, seq, key);
  }
}

void Scheduler::enqueue_large(SequenceHandle handle) {
  Sequence& seq = state_.sequences[handle];
  seq.state = SequenceState::kQueued;
  state_.large->queue.push(handle, seq, gate_.ordering().key(seq));
  ++state_.large->generation;
}

void Scheduler::finish(SequenceHandle handle, Outcome outcome, Reason reason, Time now) {
  Sequence& seq = state_.sequences[handle];
  if (seq.large) ++state_.large->generation;
  if (seq.state == SequenceState::kQueued) {
    state_.queue_holding(seq).erase(handle, seq);
  } else if (seq.state == SequenceState::kRunning) {
    take_off_engine(seq, handle);
  }
  if (seq.swapped) kv_.discard_swapped(seq);
  state_.count_transition(seq, seq.state, SequenceState::kFinished);
  RequestRecord record;
  record.id = seq.spec.id;
  record.model = seq.spec.model;
  record.slo_class = seq.downgraded_from.value_or(seq.spec.slo_class);
  if (seq.downgraded_from) record.downgraded_to = seq.spec.slo_class;
  record.tenant = seq.spec.tenant;
  record.outcome = outcome;
  record.reason = reason;
  record.arrival = seq.spec.arrival;
  record.first_scheduled = seq.first_scheduled;
  record.first_token = seq.first_token;
  record.finished = now;
  record.prompt_tokens = seq.spec.prompt_tokens;
  record.output_tokens = seq.generated_tokens;
  record.cached_prompt_tokens = seq.cached_prompt_tokens;
  record.gpu = seq.gpu;
  record.preemptions = seq.preemptions;
  if (outcome == Outcome::kCompleted && record.first_token) {
    const SloClass& slo = node_.slo_class(record.slo_class);
    record.ttft_met = slo.ttft_met_by(*record.ttft()) &&
                      (!seq.spec.ttft_deadline || *seq.first_token <= *seq.spec.ttft_deadline);
    record.slo_met = record.ttft_met && slo.tpot_met_by(record.tpot());
  }
  effects_.finished.push_back(record);
  gate_.note_finished(seq, record, now);
  if (outcome == Outcome::kCompleted) {
    state_.predictor.observe(seq.spec.model, seq.spec.prompt_tokens, seq.generated_tokens);
    if (seq.first_scheduled) {
      PredictionAccuracy& accuracy = state_.prediction_accuracy[seq.spec.model.value()];
      ++accuracy.samples;
      accuracy.abs_error_tokens_sum += std::abs(seq.predicted_output_tokens - seq.generated_tokens);
      accuracy.abs_error_seconds_sum += std::abs(to_seconds(now - seq.predicted_finish));
      accuracy.actual_tokens_sum += seq.generated_tokens;
    }
  }

  handle_by_id_.erase(seq.spec.id);
  seq.state = SequenceState::kFinished;
  seq.spec.prefix_blocks.clear();
  seq.blocks.clear();
  free_handles_.push_back(handle);
  --state_.live_sequences;
}

void Scheduler::discard_sequence(SequenceHandle handle) {
  Sequence& seq = state_.sequences[handle];
  handle_by_id_.erase(seq.spec.id);
  seq.state = SequenceState::kFinished;
  seq.spec.prefix_blocks.clear();
  free_handles_.push_back(handle);
  --state_.live_sequences;
}

void Scheduler::shed_queued(Time now) {
  // Collected first: finishing edits the queues.
  for (const SequenceHandle h : gate_.shed_victims()) {
    finish(h, Outcome::kRejected, Reason::kShed, now);
    effects_.finished.back().retry_after = std::chrono::seconds(1);
    gate_.note_shed_from_queue();
  }
}

void Scheduler::on_iteration_done(EngineRef engine, std::span<const RequestId> ended, Time now) {
  if (engine.gang) {
    LargeModelRuntime& large = *state_.large;
    if (!large.busy) throw std::logic_error("on_iteration_done: the gang has no iteration");
    // The shape is the finished batch's (the policies' demand model counts its prefill).
    const IterationLaunch launch{engine, large.model, {}, large.batch_shape, {}, large.busy_since};
    large.busy = false;
    large.slowdown = next_slowdown(large.slowdown, large.busy_since, large.predicted_free, now);
    complete_batch(large.batch, ended, now);
    ++large.generation;
    policy_->on_iteration_finished(state_, launch, now);
  } else {
    GpuRuntime& gpu = state_.gpus.at(engine.gpu.value());
    if (!gpu.small_busy) throw std::logic_error("on_iteration_done: the GPU has no iteration");
    const IterationLaunch launch{
        engine, state_.replicas[gpu.batch_replica].model, {}, gpu.batch_shape, {}, gpu.busy_since};
    gpu.small_busy = false;
    gpu.slowdown = next_slowdown(gpu.slowdown, gpu.busy_since, gpu.predicted_free, now);
    complete_batch(gpu.batch, ended, now);
    policy_->on_iteration_finished(state_, launch, now);
  }
  decide(now);
  after_event(now);
}

void Scheduler::complete_batch(std::vector<BatchEntry>& batch, std::span<const RequestId> ended,
                               Time now) {
  scratch_finished_.clear();
  // The simulator names an iteration's ended sequences in batch order, so each entry is matched
  // against the next unmatched ended id: one comparison per entry rather than a scan of `ended`.
  // An `ended` that does not follow the batch (another order, an id not in it: a real engine's
  // report may) is matched again by search below.
  size_t next_ended = 0;
  // Whether the entry's sequence leaves now (its iteration done): cancelled, or its token was
  // the last (max_tokens, or the engine ended it).
  auto leaves = [](const BatchEntry& entry, const Sequence& seq, bool engine_ended) {
    return (entry.emits_token && (seq.generated_tokens >= seq.spec.max_tokens || engine_ended)) ||
           seq.cancel_pending;
  };
  for (const BatchEntry& entry : batch) {
    Sequence& seq = state_.sequences[entry.handle];
    seq.in_flight = false;
    seq.kv_tokens += entry.prefill_tokens > 0 ? entry.prefill_tokens : 1;
    if (entry.prefill_tokens > 0) {
      int64_t& resident_prefill =
          seq.large ? state_.large->resident_prefill_tokens
                    : state_.replicas[seq.running_replica].resident_prefill_tokens;
      resident_prefill -= entry.prefill_tokens;
      kv_.publish_computed_blocks(seq);
    }
    if (entry.emits_token) {
      ++seq.generated_tokens;
      if (!seq.first_token) seq.first_token = now;
    }
    const bool named_ended = next_ended < ended.size() && ended[next_ended] == entry.id;
    if (named_ended) ++next_ended;
    if (leaves(entry, seq, named_ended)) scratch_finished_.push_back(entry.handle);
  }
  if (next_ended < ended.size()) {
    // Not in batch order: the leaving sequences again, with each entry looked up in `ended`.
    scratch_finished_.clear();
    for (const BatchEntry& entry : batch) {
      const bool named_ended = std::find(ended.begin(), ended.end(), entry.id) != ended.end();
      if (leaves(entry, state_.sequences[entry.handle], named_ended)) {
        scratch_finished_.push_back(entry.handle);
      }
    }
  }
  batch.clear();
  for (SequenceHandle handle : scratch_finished_) {
    const Sequence& seq = state_.sequences[handle];
    if (seq.cancel_pending) {
      finish(handle, Outcome::kCancelled, Reason::kClientCancelled, now);
    } else {
      finish(handle, Outcome::kCompleted, Reason::kNone, now);
    }
  }
}

void Scheduler::cancel(RequestId id, Time now) {
  auto it = handle_by_id_.find(id);
  if (it != handle_by_id_.end()) {
    Sequence& seq = state_.sequences[it->second];
    if (seq.in_flight) {
      seq.cancel_pending = true;
    } else {
      finish(it->second, Outcome::kCancelled, Reason::kClientCancelled, now);
    }
  }
  decide(now);
  after_event(now);
}

void Scheduler::on_timer(Time now) {
  decide(now);
  after_event(now);
}

void Scheduler::stop(Time now, Reason reason) {
  for (SequenceHandle h = 0; h < state_.sequences.size(); ++h) {
    Sequence& seq = state_.sequences[h];
    if (seq.state == SequenceState::kFinished) continue;
    seq.in_flight = false;
    finish(h, Outcome::kCancelled, reason, now);
  }
  for (GpuRuntime& gpu : state_.gpus) {
    gpu.small_busy = false;
    gpu.batch.clear();
  }
  if (state_.large) {
    state_.large->busy = false;
    state_.large->batch.clear();
  }
  state_.gang.phase = GangPhase::kOff;
  after_event(now);
}

Time Scheduler::next_wakeup(Time now) const {
  Time wake = next_work_wakeup(now);
  // The ladder stepping down once arrivals have stopped (it defers batch work while up).
  if (state_.live_sequences > 0) wake = std::min(wake, gate_.next_pressure_refresh(now));
  return wake;
}

Time Scheduler::next_work_wakeup(Time now) const {
  // A KV copy from host memory ends: its sequence can join an iteration.
  return std::min(policy_->next_wakeup(state_, now), kv_.next_copy_end(now));
}

void Scheduler::gpu_activities(std::span<GpuActivity> out) const {
  const bool large_busy = state_.large && state_.large->busy;
  const GangPhase phase = state_.gang.phase;
  const bool large_waiting = state_.has_large_work();
  for (size_t g = 0; g < state_.gpus.size(); ++g) {
    const GpuRuntime& gpu = state_.gpus[g];
    GpuActivity activity = GpuActivity::kIdle;
    if (gpu.failed) {
      activity = GpuActivity::kFailed;
    } else if (gpu.small_busy) {
      activity = GpuActivity::kRunningSmall;
    } else if (large_busy) {
      activity = GpuActivity::kRunningLarge;
    } else if (phase != GangPhase::kOff) {
      activity = GpuActivity::kGangBarrier;
    } else {
      bool work = large_waiting;
      for (uint32_t index : gpu.replicas) {
        const Replica& replica = state_.replicas[index];
        work = work || !replica.running.empty() || !replica.paused.empty() ||
               state_.replica_has_queued_work(replica);
      }
      if (work) activity = GpuActivity::kIdleWhileWaiting;
    }
    out[g] = activity;
  }
}

void Scheduler::after_event([[maybe_unused]] Time now) {
  ++events_;
  kv_.note_host_usage();
#ifdef GANGWAY_CHECK_INVARIANTS
  check_invariants();
  check_progress(now);
#endif
}

// ---------------------------------------------------------------------------------------------
// The decision pass.

void Scheduler::decide(Time now) {
  kv_.forget_copies_ended_by(now);
  gate_.refresh_pressure(now);
  kv_.rebalance(now, state_.gang.phase == GangPhase::kActive, *this);
  policy_->plan(state_, now);
  decide_once(now);
  // A pass can end with live work and nothing to run it: no iteration in flight and no wakeup
  // asked for. Two ways were found (tests/regressions/): the ladder's `defer_batch` held a batch
  // request at a queue's head while the requests it deferred to waited for it (queued behind it
  // in arrival order, or behind it in fcfs's global order), and an exclusive phase that had
  // stopped admitting for a small request ahead of the large queue ended after that request was
  // shed. Nothing else would happen until the next arrival, which may never come, so the pass
  // runs again at once with deferral lifted; where the first pass left something running this
  // changes nothing. (The ladder's own wakeups, when it may step down, do not count here: with
  // every GPU idle, deferred work would wait a second or more for them.)
  if (idle_with_live_work() && next_work_wakeup(now) == Time::max()) {
    gate_.lift_deferral(true);
    decide_once(now);
    gate_.lift_deferral(false);
  }
}

void Scheduler::decide_once(Time now) {
  gang_.advance(now);
  for (GpuRuntime& gpu : state_.gpus) {
    // A GPU with an iteration in flight starts nothing (most of them at any decision).
    if (!gpu.small_busy) maybe_start_small(gpu, now);
  }
}

bool Scheduler::idle_with_live_work() const {
  return state_.live_sequences > 0 && !state_.any_engine_busy();
}

bool Scheduler::stalled(Time now) const {
  return idle_with_live_work() && next_wakeup(now) == Time::max();
}

bool Scheduler::launch_small(GpuRuntime& gpu, Replica& replica, Time now,
                             std::optional<Duration> max_duration) {
  const std::optional<BatchShape> built = batches_.build_small(gpu, replica, now, max_duration);
  if (!built) return false;
  const BatchShape& shape = *built;
  const Duration predicted = cost_models_[replica.model.value()]->iteration_time(shape);
  gpu.small_busy = true;
  gpu.busy_since = now;
  gpu.predicted_free = now + predicted;
  gpu.last_iteration = predicted;
  gpu.batch_shape = shape;
  gpu.batch_replica = static_cast<uint32_t>(&replica - state_.replicas.data());
  effects_.launches.push_back(
      IterationLaunch{EngineRef::small(gpu.id), replica.model, gpu.batch, shape, predicted, now});
  return true;
}

bool Scheduler::launch_large(Time now, bool admit_new) {
  const std::optional<BatchShape> built = batches_.build_large(now, admit_new);
  if (!built) return false;
  const BatchShape& shape = *built;
  LargeModelRuntime& large = *state_.large;
  const Duration predicted = large.cost->iteration_time(shape);
  large.busy = true;
  large.busy_since = now;
  large.predicted_free = now + predicted;
  large.last_iteration = predicted;
  ++large.generation;
  large.batch_shape = shape;
  effects_.launches.push_back(
      IterationLaunch{EngineRef::large(), large.model, large.batch, shape, predicted, now});
  return true;
}

void Scheduler::maybe_start_small(GpuRuntime& gpu, Time now) {
  if (gpu.failed || gpu.small_busy || gpu.replicas.empty()) return;
  const GangPhase phase = state_.gang.phase;
  if (phase == GangPhase::kActive) return;
  std::optional<Duration> max_duration;
  if (phase == GangPhase::kPending && policy_->mode() == ExecutionMode::kLease) {
    // The gang starts when the last busy GPU reaches its boundary. Until then this GPU may run
    // an iteration that is predicted to end in time (barrier backfill), so the wait costs less.
    const Time barrier = state_.gang_barrier(now);
    if (barrier <= now) return;
    max_duration = barrier - now;
  }
  if (phase == GangPhase::kOff) {
    for (uint32_t index : gpu.replicas) resume_paused(state_.replicas[index]);
  }
  // Round robin among the small models placed on this GPU, starting after the last one served.
  const size_t count = gpu.replicas.size();
  bool any_work = false;
  for (uint32_t index : gpu.replicas) {
    const Replica& replica = state_.replicas[index];
    any_work = any_work || !replica.running.empty() || state_.replica_has_queued_work(replica);
  }
  if (!any_work) {
    // Idle with nothing to do here: pull a request queued elsewhere if the router finds one
    // that starts sooner on this GPU.
    for (size_t i = 0; i < count && !any_work; ++i) {
      any_work = steal_work(state_.replicas[gpu.replicas[(gpu.next_replica + i) % count]], now);
    }
    if (!any_work) return;
  }
  for (size_t i = 0; i < count; ++i) {
    const uint32_t index = gpu.replicas[(gpu.next_replica + i) % count];
    Replica& replica = state_.replicas[index];
    if (replica.running.empty() && !state_.replica_has_queued_work(replica)) continue;
    const SequenceHandle victim = gate_.priority_victim(replica);
    if (victim != kNoSequence) {
      // A pause would keep its memory: swapped or dropped for recompute, whichever costs less.
      preempt(victim, now, PreemptionReason::kPriority, /*memory_needed=*/true);
    }
    if (launch_small(gpu, replica, now, max_duration)) {
      gpu.next_replica = static_cast<uint32_t>((gpu.next_replica + i + 1) % count);
      return;
    }
  }
}

}  // namespace gangway
