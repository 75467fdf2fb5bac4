#include "sched/request_level/request_level_core.h"

#include <algorithm>

namespace gangway {

const char* to_string(EnginePause pause) {
  switch (pause) {
    case EnginePause::kRunning:
      return "running";
    case EnginePause::kPausing:
      return "pausing";
    case EnginePause::kPaused:
      return "paused";
    case EnginePause::kResuming:
      return "resuming";
  }
  return "running";
}

RequestLevelCore::RequestLevelCore(const NodeSpec& node, std::vector<EngineDescriptor> engines,
                                   const RequestLevelOptions& options)
    : node_(node),
      options_(options),
      planner_(options.tiers),
      queues_(node.models.size()),
      rotation_(node.models.size(), 0),
      class_queued_(node.models.size(), std::vector<int64_t>(node.slo_classes.size(), 0)),
      class_running_(node.models.size(), std::vector<int64_t>(node.slo_classes.size(), 0)),
      mean_service_(node.models.size(), Duration(0)),
      service_observed_(node.models.size(), false) {
  for (EngineDescriptor& descriptor : engines) {
    EngineSlot slot;
    slot.descriptor = std::move(descriptor);
    engines_.push_back(std::move(slot));
  }
}

void RequestLevelCore::start(Time now) {
  held_since_ = now;
  holder_ = EngineTier::kSmall;
  if (options_.lease) {
    for (size_t e = 0; e < engines_.size(); ++e) {
      EngineSlot& engine = engines_[e];
      if (tier_of(engine) != EngineTier::kLarge || !engine.healthy) continue;
      engine.pause = EnginePause::kPausing;
      engine.control_asked = now;
      effects_.controls.push_back({static_cast<EngineIndex>(e), EngineControl::Kind::kPause});
    }
  }
  after_event(now);
}

int64_t RequestLevelCore::queue_key(const RequestSpec& spec) const {
  if (options_.queue_order == QueueOrder::kArrival) return spec.arrival.ns();
  const SloClass& slo = node_.slo_class(spec.slo_class);
  Time deadline = spec.arrival + slo.ttft_target.value_or(options_.no_target_deadline);
  if (spec.ttft_deadline) deadline = std::min(deadline, *spec.ttft_deadline);
  return deadline.ns();
}

bool RequestLevelCore::model_available(ModelId model) const {
  return std::any_of(engines_.begin(), engines_.end(), [&](const EngineSlot& engine) {
    return engine.descriptor.model.value() == model.value() && engine.healthy;
  });
}

bool RequestLevelCore::submit(const RequestSpec& spec, Time now) {
  LiveRequest request;
  request.spec = spec;
  request.queue_key = queue_key(spec);
  requests_.emplace(spec.id.value(), std::move(request));
  const int64_t queued_here = class_queued_[spec.model.value()][spec.slo_class.value()];
  Reason rejection = Reason::kNone;
  if (!model_available(spec.model)) {
    rejection = Reason::kNoCapacity;
  } else if (queued_here >= options_.queue_cap) {
    rejection = Reason::kQueueFull;
  }
  if (rejection != Reason::kNone) {
    end(spec.id, Outcome::kRejected, rejection, now);
    after_event(now);
    return false;
  }
  LiveRequest& live = requests_.at(spec.id.value());
  queues_[spec.model.value()].emplace(std::make_pair(live.queue_key, queued_sequence_++), spec.id);
  ++class_queued_[spec.model.value()][spec.slo_class.value()];
  decide(now);
  after_event(now);
  return true;
}

void RequestLevelCore::on_first_token(RequestId id, Time now) {
  const auto it = requests_.find(id.value());
  if (it == requests_.end() || !it->second.engine) return;
  if (!it->second.first_token) it->second.first_token = now;
  it->second.output_tokens = std::max(it->second.output_tokens, 1);
  after_event(now);
}

void RequestLevelCore::on_tokens(RequestId id, int32_t output_tokens, Time now) {
  const auto it = requests_.find(id.value());
  if (it == requests_.end() || !it->second.engine) return;
  if (!it->second.first_token && output_tokens > 0) it->second.first_token = now;
  it->second.output_tokens = std::max(it->second.output_tokens, output_tokens);
  after_event(now);
}

void RequestLevelCore::on_end(RequestId id, Outcome outcome, Reason reason, int32_t output_tokens,
                              Time now) {
  const auto it = requests_.find(id.value());
  // Ended here already (cancelled, its engine failed): the engine's word comes too late.
  if (it == requests_.end() || !it->second.engine) {
    after_event(now);
    return;
  }
  it->second.output_tokens = std::max(it->second.output_tokens, output_tokens);
  if (outcome == Outcome::kCompleted && !it->second.first_token) it->second.first_token = now;
  end(id, outcome, reason, now);
  decide(now);
  after_event(now);
}

void RequestLevelCore::cancel(RequestId id, Time now) {
  const auto it = requests_.find(id.value());
  if (it == requests_.end()) return;
  if (it->second.engine) effects_.aborts.push_back({id, *it->second.engine});
  end(id, Outcome::kCancelled, Reason::kClientCancelled, now);
  decide(now);
  after_event(now);
}

void RequestLevelCore::on_engine_paused(EngineIndex index, Time now) {
  on_control_answered(index, EnginePause::kPausing, EnginePause::kPaused, &EngineSlot::pauses, now);
}

void RequestLevelCore::on_engine_resumed(EngineIndex index, Time now) {
  on_control_answered(index, EnginePause::kResuming, EnginePause::kRunning, &EngineSlot::resumes,
                      now);
}

void RequestLevelCore::on_control_answered(EngineIndex index, EnginePause from, EnginePause to,
                                           int64_t EngineSlot::*count, Time now) {
  EngineSlot& engine = engines_.at(index);
  if (engine.pause == from) {
    engine.pause = to;
    ++(engine.*count);
  }
  decide(now);
  after_event(now);
}

void RequestLevelCore::on_engine_failed(EngineIndex index, Time now) {
  EngineSlot& engine = engines_.at(index);
  if (!engine.healthy) return;
  engine.healthy = false;
  // A pause or resume in flight will not be answered; a restarted process starts unpaused.
  engine.pause = EnginePause::kRunning;
  const std::vector<RequestId> running = engine.running;
  for (const RequestId id : running) {
    effects_.aborts.push_back({id, index});
    end(id, Outcome::kFailed, Reason::kEngineFailed, now);
  }
  fail_queued_without_engine(now);
  decide(now);
  after_event(now);
}

void RequestLevelCore::on_engine_recovered(EngineIndex index, Time now) {
  EngineSlot& engine = engines_.at(index);
  if (engine.healthy) return;
  engine.healthy = true;
  engine.pause = EnginePause::kRunning;
  // Brought in line with its tier: held while the other tier has the GPUs (or takes them).
  const bool held = options_.lease && (tier_of(engine) != holder_ || switching_);
  if (held) {
    engine.pause = EnginePause::kPausing;
    engine.control_asked = now;
    effects_.controls.push_back({index, EngineControl::Kind::kPause});
  }
  decide(now);
  after_event(now);
}

void RequestLevelCore::on_timer(Time now) {
  decide(now);
  after_event(now);
}

void RequestLevelCore::stop(Time now, Reason reason) {
  std::vector<uint64_t> ids;
  ids.reserve(requests_.size());
  for (const auto& [id, request] : requests_) ids.emplace_back(id);
  std::sort(ids.begin(), ids.end());
  for (const uint64_t value : ids) {
    const RequestId id(value);
    const LiveRequest& request = requests_.at(value);
    if (request.engine) effects_.aborts.push_back({id, *request.engine});
    end(id, Outcome::kCancelled, reason, now);
  }
  after_event(now);
}

int64_t RequestLevelCore::queued(ModelId model) const {
  return static_cast<int64_t>(queues_[model.value()].size());
}

std::optional<EngineIndex> RequestLevelCore::engine_of(RequestId id) const {
  const auto it = requests_.find(id.value());
  if (it == requests_.end()) return std::nullopt;
  return it->second.engine;
}

Time RequestLevelCore::next_wakeup(Time now) const {
  Time wake = next_tier_check_;
  // Queued requests with a deadline of their own are dropped when it passes.
  for (const Queue& queue : queues_) {
    for (const auto& [key, id] : queue) {
      const LiveRequest& request = requests_.at(id.value());
      if (request.spec.ttft_deadline) wake = std::min(wake, *request.spec.ttft_deadline);
    }
  }
  return wake <= now ? now : wake;
}

TierBacklog RequestLevelCore::backlog(EngineTier tier) const {
  TierBacklog out;
  out.available = false;
  auto waiting_since = [&](Time arrival) {
    if (!out.oldest_waiting_arrival || arrival < *out.oldest_waiting_arrival) {
      out.oldest_waiting_arrival = arrival;
    }
  };
  for (const EngineSlot& engine : engines_) {
    if (tier_of(engine) != tier) continue;
    out.available = out.available || engine.healthy;
    out.running += static_cast<int64_t>(engine.running.size());
    // Only the large tier's aging reads it (TierLeasePlanner): the small tier's running
    // requests are not walked on every decision.
    if (tier != EngineTier::kLarge) continue;
    for (const RequestId id : engine.running) {
      const LiveRequest& request = requests_.at(id.value());
      if (!request.first_token) waiting_since(request.spec.arrival);
    }
  }
  for (const ModelSpec& model : node_.models) {
    if ((tier == EngineTier::kLarge) != model.is_large()) continue;
    const Queue& queue = queues_[model.id.value()];
    out.queued += static_cast<int64_t>(queue.size());
    for (const auto& [key, id] : queue) {
      const Time arrival = requests_.at(id.value()).spec.arrival;
      if (!out.oldest_queued_arrival || arrival < *out.oldest_queued_arrival) {
        out.oldest_queued_arrival = arrival;
      }
      waiting_since(arrival);
    }
  }
  return out;
}

void RequestLevelCore::decide(Time now) {
  expire_queued(now);
  // A switch that completes at once (exclusive mode with nothing running) is followed by a new
  // plan for the new holder; two rounds bound it (the planner never hands straight back unless
  // the new holder has no work, and then the old one has none either by the second round).
  for (int round = 0; round < 3; ++round) {
    if (switching_) {
      advance_switch(now);
      if (switching_) break;
    }
    plan_tiers(now);
    if (!switching_) break;
  }
  dispatch(now);
}

void RequestLevelCore::plan_tiers(Time now) {
  const TierDecision decision = planner_.decide(holder_, held_since_, backlog(EngineTier::kSmall),
                                                backlog(EngineTier::kLarge), now);
  next_tier_check_ = decision.ask_again;
  if (decision.hand_over) begin_switch(now);
}

void RequestLevelCore::begin_switch(Time now) {
  switching_ = true;
  switch_started_ = now;
  next_tier_check_ = Time::max();
  if (!options_.lease) return;  // exclusive: the holder's requests drain (advance_switch)
  for (size_t e = 0; e < engines_.size(); ++e) {
    EngineSlot& engine = engines_[e];
    if (tier_of(engine) != holder_ || !engine.healthy) continue;
    if (engine.pause == EnginePause::kPaused || engine.pause == EnginePause::kPausing) continue;
    engine.pause = EnginePause::kPausing;
    engine.control_asked = now;
    effects_.controls.push_back({static_cast<EngineIndex>(e), EngineControl::Kind::kPause});
  }
}

// A switch completes in two steps. Lease: every healthy engine of the holder has answered its
// pause, then the other tier's engines are asked to resume, and the switch is over when they
// have answered. Exclusive: the holder's requests have all ended.
void RequestLevelCore::advance_switch(Time now) {
  const EngineTier next = holder_ == EngineTier::kSmall ? EngineTier::kLarge : EngineTier::kSmall;
  if (!options_.lease) {
    if (backlog(holder_).running > 0) return;
  } else {
    for (const EngineSlot& engine : engines_) {
      if (tier_of(engine) == holder_ && engine.healthy && engine.pause != EnginePause::kPaused) {
        return;
      }
    }
    bool asked = false;
    bool waiting = false;
    for (size_t e = 0; e < engines_.size(); ++e) {
      EngineSlot& engine = engines_[e];
      if (tier_of(engine) != next || !engine.healthy) continue;
      if (engine.pause == EnginePause::kPaused) {
        engine.pause = EnginePause::kResuming;
        engine.control_asked = now;
        effects_.controls.push_back({static_cast<EngineIndex>(e), EngineControl::Kind::kResume});
        asked = true;
      }
      // A pause still out on this engine (it recovered meanwhile) is answered first.
      if (engine.pause != EnginePause::kRunning) waiting = true;
    }
    if (asked || waiting) return;
  }
  switching_ = false;
  holder_ = next;
  held_since_ = now;
  ++tier_switches_;
  planner_.observe_switch(now - switch_started_);
  effects_.tier_changes.push_back({holder_, now});
}

void RequestLevelCore::dispatch(Time now) {
  // Exclusive mode holds every dispatch of the tier that is handing over; lease mode holds it
  // through the paused state of the engines.
  for (const ModelSpec& model : node_.models) {
    const EngineTier tier = model.is_large() ? EngineTier::kLarge : EngineTier::kSmall;
    if (tier != holder_ || switching_) continue;
    Queue& queue = queues_[model.id.value()];
    while (!queue.empty()) {
      const RequestId id = queue.begin()->second;
      LiveRequest& request = requests_.at(id.value());
      const int64_t tokens =
          static_cast<int64_t>(request.spec.prompt_tokens) + request.spec.max_tokens;
      std::optional<EngineIndex> best;
      // Ties go round robin from the engine after the last one chosen for this model.
      const size_t first = rotation_[model.id.value()];
      for (size_t step = 0; step < engines_.size(); ++step) {
        const size_t e = (first + step) % engines_.size();
        const EngineSlot& engine = engines_[e];
        if (engine.descriptor.model.value() != model.id.value() || !engine.takes_work()) continue;
        const int64_t reserve = std::min(tokens, engine.descriptor.kv_capacity_tokens);
        if (!engine.fits(reserve)) continue;
        if (!best || engine.reserved_tokens < engines_[*best].reserved_tokens) {
          best = static_cast<EngineIndex>(e);
        }
      }
      if (!best) break;
      EngineSlot& engine = engines_[*best];
      rotation_[model.id.value()] = (*best + 1) % engines_.size();
      request.reserved_tokens = std::min(tokens, engine.descriptor.kv_capacity_tokens);
      request.engine = *best;
      request.dispatched = now;
      engine.running.push_back(id);
      engine.reserved_tokens += request.reserved_tokens;
      queue.erase(queue.begin());
      --class_queued_[model.id.value()][request.spec.slo_class.value()];
      ++class_running_[model.id.value()][request.spec.slo_class.value()];
      effects_.dispatches.push_back({id, *best});
    }
  }
}

void RequestLevelCore::expire_queued(Time now) {
  for (Queue& queue : queues_) {
    for (auto it = queue.begin(); it != queue.end();) {
      const RequestId id = it->second;
      const LiveRequest& request = requests_.at(id.value());
      ++it;
      if (request.spec.ttft_deadline && *request.spec.ttft_deadline <= now) {
        end(id, Outcome::kRejected, Reason::kDeadlineExpired, now);
      }
    }
  }
}

void RequestLevelCore::fail_queued_without_engine(Time now) {
  for (const ModelSpec& model : node_.models) {
    if (model_available(model.id)) continue;
    std::vector<RequestId> ids;
    for (const auto& [key, id] : queues_[model.id.value()]) ids.push_back(id);
    for (const RequestId id : ids) end(id, Outcome::kFailed, Reason::kNoCapacity, now);
  }
}

void RequestLevelCore::end(RequestId id, Outcome outcome, Reason reason, Time now) {
  const auto it = requests_.find(id.value());
  if (it == requests_.end()) return;
  LiveRequest& request = it->second;
  if (request.engine) {
    EngineSlot& engine = engines_[*request.engine];
    engine.running.erase(
        std::find_if(engine.running.begin(), engine.running.end(),
                     [&](RequestId other) { return other.value() == id.value(); }));
    engine.reserved_tokens -= request.reserved_tokens;
    --class_running_[request.spec.model.value()][request.spec.slo_class.value()];
    if (outcome == Outcome::kCompleted && request.dispatched) observe_service(request, now);
  } else {
    Queue& queue = queues_[request.spec.model.value()];
    for (auto q = queue.begin(); q != queue.end(); ++q) {
      if (q->second.value() != id.value()) continue;
      queue.erase(q);
      --class_queued_[request.spec.model.value()][request.spec.slo_class.value()];
      break;
    }
  }
  RequestRecord record;
  record.id = id;
  record.model = request.spec.model;
  record.slo_class = request.spec.slo_class;
  record.tenant = request.spec.tenant;
  record.outcome = outcome;
  record.reason = reason;
  record.arrival = request.spec.arrival;
  record.first_scheduled = request.dispatched;
  record.first_token = request.first_token;
  record.finished = now;
  record.prompt_tokens = request.spec.prompt_tokens;
  record.output_tokens = request.output_tokens;
  if (request.engine) {
    const EngineSlot& engine = engines_[*request.engine];
    if (!engine.descriptor.large && !engine.descriptor.gpus.empty()) {
      record.gpu = engine.descriptor.gpus.front();
    }
  }
  if (outcome == Outcome::kCompleted && record.first_token) {
    const SloClass& slo = node_.slo_class(record.slo_class);
    record.ttft_met =
        slo.ttft_met_by(*record.ttft()) &&
        (!request.spec.ttft_deadline || *record.first_token <= *request.spec.ttft_deadline);
    record.slo_met = record.ttft_met && slo.tpot_met_by(record.tpot());
  }
  effects_.finished.push_back(record);
  requests_.erase(it);
}

void RequestLevelCore::observe_service(const LiveRequest& request, Time now) {
  const size_t m = request.spec.model.value();
  const Duration took = now - *request.dispatched;
  if (!service_observed_[m]) {
    mean_service_[m] = took;
    service_observed_[m] = true;
    return;
  }
  // An eighth of the weight on the newest: steady under one request's noise, follows a change
  // of the workload within a few dozen requests.
  mean_service_[m] = Duration((mean_service_[m].count() * 7 + took.count()) / 8);
}

void RequestLevelCore::after_event([[maybe_unused]] Time now) {
#ifdef GANGWAY_CHECK_INVARIANTS
  check_invariants();
#endif
}

}  // namespace gangway
