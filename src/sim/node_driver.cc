#include "sim/node_driver.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace gangway {

namespace {

// An iteration-done event's index: the engine in the low bits, its epoch above.
constexpr int kEpochShift = 20;
constexpr uint64_t kEngineMask = (uint64_t{1} << kEpochShift) - 1;

const char* gang_event_name(GangEventKind kind) {
  switch (kind) {
    case GangEventKind::kPending:
      return "gang pending";
    case GangEventKind::kStarted:
      return "gang start";
    case GangEventKind::kReleased:
      return "gang release";
  }
  return "gang";
}

}  // namespace

NodeDriver::NodeDriver(const NodeSpec& node, SchedulerOptions scheduler_options,
                       std::unique_ptr<GangPolicy> policy, std::unique_ptr<Router> router,
                       EventQueue& events, NodeDriverOptions options)
    : node_(node),
      options_(std::move(options)),
      events_(events),
      oracle_output_lengths_(scheduler_options.oracle_predictor),
      scheduler_(std::make_unique<Scheduler>(node, scheduler_options, std::move(policy),
                                             std::move(router))),
      in_flight_(node.gpu_count + 1),
      engine_epoch_(node.gpu_count + 1, 0),
      activities_(node.gpu_count, GpuActivity::kIdle),
      window_(node.gpu_count, options_.warmup, options_.duration),
      metrics_(node.slo_class_names(), node.model_names()) {
  for (const ModelSpec& model : node.models) {
    engine_cost_.push_back(make_cost_model(model, node.hardware));
  }
}

NodeDriver::~NodeDriver() = default;

void NodeDriver::schedule_faults() {
  // Fault i starts with event 2i and ends with event 2i + 1.
  for (size_t i = 0; i < options_.faults.size(); ++i) {
    const FaultSpec& fault = options_.faults[i];
    if (fault.kind != FaultKind::kGpuLoss) continue;  // overruns and stalls act at launches
    events_.push(fault.at, SimEventKind::kFault, 2 * i, options_.node);
    if (fault.duration) {
      events_.push(fault.at + *fault.duration, SimEventKind::kFault, 2 * i + 1, options_.node);
    }
  }
}

void NodeDriver::before_event(Time time) {
  window_.before_event(time, activities_);
}

void NodeDriver::handle(const SimEvent& event, Time now) {
  switch (event.kind) {
    case SimEventKind::kArrival:
      break;  // arrivals belong to the caller
    case SimEventKind::kIterationDone: {
      const uint64_t engine = event.index & kEngineMask;
      if (event.index >> kEpochShift == engine_epoch_[engine]) {
        complete_iteration(engine, now);
        if (iteration_sink_) iteration_sink_(engine, now);
      }
      break;
    }
    case SimEventKind::kWakeup:
      if (event.index == wakeup_generation_) {
        armed_wakeup_ = Time::max();
        scheduler_->on_timer(now);
      }
      break;
    case SimEventKind::kFault:
      apply_fault(event.index, now);
      break;
    case SimEventKind::kEngineAnswer:
      break;  // request-level simulations only
  }
}

SubmitResult NodeDriver::submit(const WorkloadItem& item, Time now) {
  if (measured(item.spec.arrival)) metrics_.on_arrival(item.spec.model, item.spec.slo_class);
  const int32_t true_output = std::max<int32_t>(1, item.output_tokens);
  SubmitResult submitted;
  if (oracle_output_lengths_) {
    // The oracle reference (experiments only) may read the true length; nothing else does.
    RequestSpec spec = item.spec;
    spec.oracle_output_tokens = true_output;
    submitted = scheduler_->submit(spec, now);
  } else {
    submitted = scheduler_->submit(item.spec, now);
  }
  if (submitted.accepted) {
    if (submitted.handle >= true_output_tokens_.size()) {
      true_output_tokens_.resize(submitted.handle + 1);
    }
    true_output_tokens_[submitted.handle] = true_output;
  }
  return submitted;
}

void NodeDriver::cancel(RequestId id, Time now) {
  scheduler_->cancel(id, now);
}

std::optional<uint64_t> NodeDriver::engine_in_flight(RequestId id) const {
  for (size_t engine = 0; engine < in_flight_.size(); ++engine) {
    for (const BatchEntry& entry : in_flight_[engine]) {
      if (entry.id == id) return engine;
    }
  }
  return std::nullopt;
}

void NodeDriver::after_event(Time now) {
  apply_effects(now);
  arm_wakeup(now);
  scheduler_->gpu_activities(activities_);
  window_.after_event(now, activities_);
}

void NodeDriver::stop(Time now) {
  if (scheduler_->live_requests() > 0) {
    scheduler_->stop(now, Reason::kDriverStopped);
    apply_effects(now);
  }
  window_.stop(activities_);
}

void NodeDriver::complete_iteration(uint64_t engine_index, Time now) {
  const auto gpu_count = static_cast<uint64_t>(node_.gpu_count);
  std::span<const BatchEntry> batch = in_flight_[engine_index];
  scratch_ended_.clear();
  for (const BatchEntry& entry : batch) {
    if (entry.emits_token && entry.output_tokens_after >= true_output_tokens_[entry.handle]) {
      scratch_ended_.push_back(entry.id);
    }
  }
  in_flight_[engine_index] = {};
  const EngineRef engine = engine_index == gpu_count
                               ? EngineRef::large()
                               : EngineRef::small(GpuId(static_cast<uint16_t>(engine_index)));
  scheduler_->on_iteration_done(engine, scratch_ended_, now);
}

void NodeDriver::apply_effects(Time now) {
  Effects& effects = scheduler_->effects();
  for (const IterationLaunch& launch : effects.launches) {
    const Duration cost = engine_cost_[launch.model.value()]->iteration_time(launch.shape);
    const Time end = options_.faults.empty()
                         ? now + cost
                         : faulted_end(options_.faults, launch.engine, cost, now);
    const Duration duration = end - now;
    const uint64_t engine_index =
        launch.engine.gang ? static_cast<uint64_t>(node_.gpu_count) : launch.engine.gpu.value();
    in_flight_[engine_index] = launch.entries;
    events_.push(end, SimEventKind::kIterationDone,
                 engine_index | (engine_epoch_[engine_index] << kEpochShift), options_.node);
    if (options_.timeline) {
      const nlohmann::json args = {{"seqs", launch.entries.size()},
                                   {"prefill_tokens", launch.shape.prefill_tokens},
                                   {"decode_seqs", launch.shape.decode_seqs}};
      const std::string& name = node_.model(launch.model).name;
      if (launch.engine.gang) {
        options_.timeline->span_on_all_gpus(name, "lm", now, now + duration, &args);
      } else {
        options_.timeline->span(launch.engine.gpu, name, "sm", now, now + duration, &args);
      }
    }
  }
  for (const RequestRecord& record : effects.finished) {
    if (measured(record.arrival)) metrics_.on_finished(record);
    if (sink_) sink_(record);
  }
  if (options_.timeline) {
    for (const GangEvent& gang : effects.gang_events) {
      options_.timeline->instant(kNodeWide, gang_event_name(gang.kind), gang.time);
    }
  }
  effects.clear();
}

void NodeDriver::apply_fault(uint64_t index, Time now) {
  const FaultSpec& fault = options_.faults[index / 2];
  const bool starts = index % 2 == 0;
  const GpuId gpu = *fault.gpu;
  if (!starts) {
    scheduler_->on_engine_restored(gpu, now);
    return;
  }
  // The iterations in flight on the GPU, and the gang's if it is running, are lost.
  ++engine_epoch_[gpu.value()];
  in_flight_[gpu.value()] = {};
  const auto gang = static_cast<size_t>(node_.gpu_count);
  if (scheduler_->state().large && scheduler_->state().large->busy) {
    ++engine_epoch_[gang];
    in_flight_[gang] = {};
  }
  scheduler_->on_engine_failed(gpu, now);
}

void NodeDriver::arm_wakeup(Time now) {
  const Time wanted = scheduler_->next_wakeup(now);
  if (wanted == Time::max() || wanted <= now || wanted >= armed_wakeup_) return;
  armed_wakeup_ = wanted;
  events_.push(wanted, SimEventKind::kWakeup, ++wakeup_generation_, options_.node);
}

}  // namespace gangway
