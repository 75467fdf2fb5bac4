#include "sim/request_level_simulator.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace gangway {
namespace {

EngineLimits limits_for(const NodeSpec& node, const EngineDescriptor& engine) {
  const ModelSpec& model = node.model(engine.model);
  EngineLimits limits;
  limits.block_tokens = node.kv_block_tokens;
  limits.kv_blocks = std::max<int64_t>(1, engine.kv_capacity_tokens / node.kv_block_tokens);
  limits.max_num_seqs = std::max(1, engine.max_num_seqs);
  limits.max_num_batched_tokens = std::max(1, model.max_batched_tokens);
  limits.max_model_len = static_cast<int32_t>(std::min<int64_t>(
      model.max_context_tokens, std::max<int64_t>(2, limits.kv_blocks * limits.block_tokens)));
  return limits;
}

}  // namespace

RequestLevelSimulator::RequestLevelSimulator(const NodeSpec& node, RequestLevelSimulationSpec spec,
                                             RequestSource& source, SimulationOptions options)
    : node_(node),
      options_(std::move(options)),
      calls_(spec.calls),
      core_(node, spec.engines, spec.core),
      arrivals_(source, Time::zero() + options_.duration),
      window_(node.gpu_count, options_.warmup, options_.duration),
      activities_(node.gpu_count, GpuActivity::kIdle),
      metrics_(node.slo_class_names(), node.model_names()) {
  for (const ModelSpec& model : node.models)
    costs_.push_back(make_cost_model(model, node.hardware));
  for (const EngineDescriptor& descriptor : spec.engines) {
    Engine engine;
    engine.model = std::make_unique<ContinuousBatchingEngine>(*costs_[descriptor.model.value()],
                                                              limits_for(node, descriptor));
    engines_.push_back(std::move(engine));
  }
  if (options_.series_bin > Duration(0)) series_.emplace(node, options_.series_bin);
}

RequestLevelSimulator::~RequestLevelSimulator() = default;

int64_t RequestLevelSimulator::pauses() const {
  int64_t total = 0;
  for (const EngineSlot& slot : core_.engines()) total += slot.pauses;
  return total;
}

int64_t RequestLevelSimulator::resumes() const {
  int64_t total = 0;
  for (const EngineSlot& slot : core_.engines()) total += slot.resumes;
  return total;
}

SimulationResult RequestLevelSimulator::run() {
  const Time hard_end = Time::zero() + options_.duration + options_.drain_limit;
  core_.start(now_);
  carry_out_effects();
  arrivals_.schedule_next(now_, events_);
  while (!events_.empty()) {
    const SimEvent event = events_.pop();
    if (event.time > hard_end) break;
    window_.before_event(event.time, activities_);
    now_ = event.time;
    ++events_processed_;
    if (event.kind == SimEventKind::kArrival) {
      submit_next_arrival();
    } else {
      handle(event);
    }
    carry_out_effects();
    arm_wakeup();
    observe_activities();
    window_.after_event(now_, activities_);
    if (series_) {
      int64_t queued = 0;
      for (const ModelSpec& model : node_.models) queued += core_.queued(model.id);
      series_->sample(now_, queued, static_cast<int64_t>(core_.live_requests()));
    }
    // Done once arrivals have stopped and nothing is left in the system.
    if (!arrivals_.pending() && core_.live_requests() == 0) break;
  }
  if (core_.live_requests() > 0) {
    core_.stop(now_, Reason::kDriverStopped);
    carry_out_effects();
  }
  window_.stop(activities_);
  return SimulationResult{to_seconds(now_),    to_seconds(options_.duration - options_.warmup),
                          events_processed_,   requests_,
                          std::move(metrics_), std::move(window_.node_time()),
                          large_holds_,        std::move(series_)};
}

void RequestLevelSimulator::submit_next_arrival() {
  const WorkloadItem item = arrivals_.take();
  ++requests_;
  if (series_) series_->on_arrival(item.spec.arrival, item.spec.slo_class);
  if (window_.measured(item.spec.arrival)) {
    metrics_.on_arrival(item.spec.model, item.spec.slo_class);
  }
  pending_[item.spec.id.value()] = Pending{item.spec.prompt_tokens, item.spec.max_tokens,
                                           std::max<int32_t>(1, item.output_tokens)};
  core_.submit(item.spec, now_);
  arrivals_.schedule_next(now_, events_);
}

void RequestLevelSimulator::handle(const SimEvent& event) {
  switch (event.kind) {
    case SimEventKind::kArrival:
    case SimEventKind::kFault:
      break;
    case SimEventKind::kIterationDone:
      end_iteration(static_cast<EngineIndex>(event.index));
      break;
    case SimEventKind::kWakeup:
      if (event.index == wakeup_generation_) {
        armed_wakeup_ = Time::max();
        core_.on_timer(now_);
      }
      break;
    case SimEventKind::kEngineAnswer:
      answer(static_cast<EngineIndex>(event.index / 2), event.index % 2 == 1);
      break;
  }
}

void RequestLevelSimulator::carry_out_effects() {
  // Carrying out a dispatch can end a request (an engine refusing it), which makes new effects.
  while (!core_.effects().empty()) {
    const RequestLevelEffects effects = core_.effects();
    core_.effects().clear();
    for (const EngineControl& control : effects.controls) {
      Engine& engine = engines_[control.engine];
      if (control.kind == EngineControl::Kind::kPause) {
        // Keep mode: nothing more is planned; the answer waits for the iteration in flight.
        engine.model->pause(PauseMode::kKeep);
        const Time settled = engine.model->iteration_in_flight() ? engine.iteration_end : now_;
        events_.push(settled + calls_.pause, SimEventKind::kEngineAnswer, 2 * control.engine);
      } else {
        events_.push(now_ + calls_.resume, SimEventKind::kEngineAnswer, 2 * control.engine + 1);
      }
    }
    for (const RequestAbort& abort : effects.aborts) {
      engines_[abort.engine].model->abort(abort.id.value());
    }
    for (const RequestDispatch& dispatch : effects.dispatches) {
      const auto it = pending_.find(dispatch.id.value());
      if (it == pending_.end()) continue;
      EngineRequest request;
      request.id = dispatch.id.value();
      request.prompt_tokens = it->second.prompt_tokens;
      request.max_tokens = std::max(1, it->second.max_tokens);
      request.stop_after_tokens = it->second.output_tokens;
      pending_.erase(it);
      if (engines_[dispatch.engine].model->add(request) !=
          ContinuousBatchingEngine::AddResult::kAccepted) {
        // The engine answers 400 (longer than its max_model_len): the request fails there.
        core_.on_end(dispatch.id, Outcome::kFailed, Reason::kBadRequest, 0, now_);
        continue;
      }
      start_iteration(dispatch.engine);
    }
    for (const RequestRecord& record : effects.finished) {
      pending_.erase(record.id.value());
      if (window_.measured(record.arrival)) metrics_.on_finished(record);
      if (series_) series_->on_finished(record);
    }
    for (const TierChange& change : effects.tier_changes) {
      if (change.holder == EngineTier::kLarge) ++large_holds_;
      if (options_.timeline) {
        options_.timeline->instant(
            kNodeWide,
            change.holder == EngineTier::kLarge ? "large tier holds" : "small tier holds",
            change.at);
      }
    }
  }
}

void RequestLevelSimulator::start_iteration(EngineIndex index) {
  Engine& engine = engines_[index];
  if (engine.model->iteration_in_flight()) return;
  const std::optional<Duration> took = engine.model->begin_iteration();
  if (!took) return;
  engine.iteration_end = now_ + *took;
  events_.push(engine.iteration_end, SimEventKind::kIterationDone, index);
  if (options_.timeline) {
    const EngineDescriptor& descriptor = core_.engines()[index].descriptor;
    const nlohmann::json args = {{"running", engine.model->running()},
                                 {"waiting", engine.model->waiting()}};
    options_.timeline->span_on_gpus(descriptor.gpus, node_.model(descriptor.model).name,
                                    descriptor.large ? "lm" : "sm", now_, engine.iteration_end,
                                    &args);
  }
}

void RequestLevelSimulator::end_iteration(EngineIndex index) {
  const std::vector<RequestUpdate> updates = engines_[index].model->end_iteration();
  for (const RequestUpdate& update : updates) {
    const RequestId id(update.id);
    if (update.finished) {
      // An aborted request was ended by the core already.
      if (update.reason != FinishReason::kAbort) {
        core_.on_end(id, Outcome::kCompleted, Reason::kNone, update.output_tokens, now_);
      }
    } else if (update.first_token) {
      core_.on_first_token(id, now_);
    }
  }
  start_iteration(index);
}

void RequestLevelSimulator::answer(EngineIndex index, bool resume) {
  if (resume) {
    engines_[index].model->resume();
    core_.on_engine_resumed(index, now_);
    start_iteration(index);
  } else {
    core_.on_engine_paused(index, now_);
  }
}

void RequestLevelSimulator::arm_wakeup() {
  const Time wanted = core_.next_wakeup(now_);
  if (wanted == Time::max() || wanted <= now_ || wanted >= armed_wakeup_) return;
  armed_wakeup_ = wanted;
  events_.push(wanted, SimEventKind::kWakeup, ++wakeup_generation_);
}

void RequestLevelSimulator::observe_activities() {
  std::fill(activities_.begin(), activities_.end(), GpuActivity::kIdle);
  for (size_t e = 0; e < engines_.size(); ++e) {
    const EngineDescriptor& descriptor = core_.engines()[e].descriptor;
    const ContinuousBatchingEngine& model = *engines_[e].model;
    for (const GpuId gpu : descriptor.gpus) {
      GpuActivity& activity = activities_[gpu.value()];
      if (model.iteration_in_flight()) {
        activity = descriptor.large ? GpuActivity::kRunningLarge : GpuActivity::kRunningSmall;
      } else if (activity == GpuActivity::kIdle &&
                 (model.waiting() + model.running() > 0 || core_.queued(descriptor.model) > 0)) {
        activity = GpuActivity::kIdleWhileWaiting;
      }
    }
  }
}

}  // namespace gangway
