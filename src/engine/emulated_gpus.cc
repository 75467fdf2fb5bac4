#include "engine/emulated_gpus.h"

#include <algorithm>

namespace gangway {

EmulatedGpus::EmulatedGpus(const NodeSpec& node, boost::asio::io_context& io,
                           const WallClock& clock, CompletionHandler on_complete)
    : node_(node), clock_(clock), on_complete_(std::move(on_complete)) {
  for (const ModelSpec& model : node.models) cost_.push_back(make_cost_model(model, node.hardware));
  for (int32_t i = 0; i <= node.gpu_count; ++i) {
    auto engine = std::make_unique<Engine>(io);
    engine->ref = i == node.gpu_count ? EngineRef::large()
                                      : EngineRef::small(GpuId(static_cast<uint16_t>(i)));
    engines_.push_back(std::move(engine));
  }
}

EmulatedGpus::~EmulatedGpus() = default;

void EmulatedGpus::admit(SequenceHandle handle, int32_t emulated_output_tokens) {
  if (handle >= output_tokens_.size()) output_tokens_.resize(handle + 1, 1);
  output_tokens_[handle] = std::max<int32_t>(1, emulated_output_tokens);
}

Duration EmulatedGpus::launch(const IterationLaunch& launch, Time now) {
  const size_t index =
      launch.engine.gang ? static_cast<size_t>(node_.gpu_count) : launch.engine.gpu.value();
  Engine& engine = *engines_[index];
  const Duration cost = cost_[launch.model.value()]->iteration_time(launch.shape);
  const Duration duration = adjust_end_ ? adjust_end_(launch.engine, cost, now) - now : cost;
  engine.entries = launch.entries;
  engine.started = now;
  engine.planned_end = now + duration;
  engine.busy = true;
  const uint64_t generation = ++engine.generation;
  engine.timer.expires_at(clock_.to_steady(engine.planned_end));
  engine.timer.async_wait([this, index, generation](const boost::system::error_code& error) {
    if (!error) complete(index, generation);
  });
  return duration;
}

void EmulatedGpus::complete(size_t engine_index, uint64_t generation) {
  Engine& engine = *engines_[engine_index];
  if (!engine.busy || engine.generation != generation) return;
  scratch_ended_.clear();
  for (const BatchEntry& entry : engine.entries) {
    const int32_t target = entry.handle < output_tokens_.size() ? output_tokens_[entry.handle] : 1;
    if (entry.emits_token && entry.output_tokens_after >= target)
      scratch_ended_.push_back(entry.id);
  }
  engine.busy = false;
  const IterationCompletion completion{engine.ref, engine.entries, scratch_ended_, engine.started,
                                       engine.planned_end};
  engine.entries = {};
  on_complete_(completion);
}

void EmulatedGpus::abandon_all() {
  for (auto& engine : engines_) {
    engine->busy = false;
    engine->entries = {};
    ++engine->generation;
    engine->timer.cancel();
  }
}

void EmulatedGpus::lose(GpuId gpu) {
  for (const size_t index :
       {static_cast<size_t>(gpu.value()), static_cast<size_t>(node_.gpu_count)}) {
    Engine& engine = *engines_[index];
    if (!engine.busy) continue;
    engine.busy = false;
    engine.entries = {};
    ++engine.generation;
    engine.timer.cancel();
  }
}

int EmulatedGpus::in_flight() const {
  return static_cast<int>(std::count_if(engines_.begin(), engines_.end(),
                                        [](const auto& engine) { return engine->busy; }));
}

}  // namespace gangway
