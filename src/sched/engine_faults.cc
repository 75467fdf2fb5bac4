// The Scheduler's GPU failure and recovery events. A lost GPU takes with it the iteration in
// flight there and the KV it held: resident sequences fail (their state is gone), queued ones
// move to replicas on healthy GPUs (or are rejected when their model has none left), and the
// large model, which needs all GPUs, cannot run at all: its queued requests are rejected at once
// with a retry-elsewhere reason, as are new ones (AdmissionGate::query says no_capacity). Every
// request still ends exactly once.
#include <algorithm>

#include "sched/scheduler.h"

namespace gangway {

void Scheduler::on_engine_failed(GpuId gpu_id, Time now) {
  GpuRuntime& gpu = state_.gpus.at(gpu_id.value());
  if (gpu.failed) return;
  gpu.failed = true;
  // The small iteration in flight here is lost.
  if (gpu.small_busy) {
    for (const BatchEntry& entry : gpu.batch) state_.sequences[entry.handle].in_flight = false;
    gpu.batch.clear();
    gpu.small_busy = false;
  }
  for (uint32_t index : gpu.replicas) {
    Replica& replica = state_.replicas[index];
    // Resident sequences lose their KV: they fail.
    std::vector<SequenceHandle> resident = replica.running;
    resident.insert(resident.end(), replica.paused.begin(), replica.paused.end());
    for (SequenceHandle h : resident) finish(h, Outcome::kFailed, Reason::kEngineFailed, now);
    // Its prefix cache went with the GPU.
    replica.kv.drop_cached();
    // Queued requests (including swapped-out ones, whose KV is safe in host memory) go to
    // healthy replicas; with none left, they are rejected.
    std::vector<SequenceHandle> queued;
    for (const auto& entry : replica.queue) queued.push_back(std::get<2>(entry));
    for (SequenceHandle h : queued) {
      Sequence& seq = state_.sequences[h];
      if (!state_.has_capacity(seq.spec.model)) {
        finish(h, Outcome::kRejected, Reason::kNoCapacity, now);
      } else {
        replica.queue.erase(h, seq);
        enqueue_small(h, now);
      }
    }
  }
  // A model's shared (late-binding) queue waits for any of its replicas: with none healthy left,
  // what waits there is told to go elsewhere too, or it would wait for a GPU that may never come
  // back (the default router binds late, so requests do wait there).
  for (SmallModelRuntime& model : state_.small_models) {
    if (model.queue.empty() || state_.has_capacity(model.model)) continue;
    std::vector<SequenceHandle> stranded;
    for (const auto& entry : model.queue) stranded.push_back(std::get<2>(entry));
    for (SequenceHandle h : stranded) finish(h, Outcome::kRejected, Reason::kNoCapacity, now);
  }
  // The large model needs every GPU: its iteration in flight and its resident state are lost,
  // and what waits for it is told to go elsewhere now.
  if (state_.large) {
    LargeModelRuntime& large = *state_.large;
    if (large.busy) {
      for (const BatchEntry& entry : large.batch) state_.sequences[entry.handle].in_flight = false;
      large.batch.clear();
      large.busy = false;
    }
    std::vector<SequenceHandle> resident = large.running;
    for (SequenceHandle h : resident) finish(h, Outcome::kFailed, Reason::kEngineFailed, now);
    std::vector<SequenceHandle> queued;
    for (const auto& entry : large.queue) queued.push_back(std::get<2>(entry));
    for (SequenceHandle h : queued) {
      finish(h, Outcome::kRejected, Reason::kNoCapacity, now);
    }
    if (state_.gang.phase != GangPhase::kOff) gang_.release(now);
  }
  decide(now);
  after_event(now);
}

void Scheduler::on_engine_restored(GpuId gpu_id, Time now) {
  GpuRuntime& gpu = state_.gpus.at(gpu_id.value());
  if (!gpu.failed) return;
  gpu.failed = false;
  gpu.slowdown = 1.0;
  decide(now);
  after_event(now);
}

}  // namespace gangway
