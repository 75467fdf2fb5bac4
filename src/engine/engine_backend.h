// The seam between a real-time driver and the engines that run its iterations: emulated GPUs
// (timed by the cost model, this folder's EmulatedGpus) today, engine processes on real GPUs
// later. The driver hands each launch the scheduler core asks for to the backend, and the
// backend reports the iteration's completion, with the requests whose engine produced their
// end-of-sequence token in it, on the driver's thread.
//
// Ownership: the launch's entries stay valid until its completion is reported (the core's
// promise); the backend keeps the span, not a copy. Thread-safety: none; every call and every
// completion happens on the driver's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "core/time.h"
#include "sched/iteration.h"

namespace gangway {

struct IterationCompletion {
  EngineRef engine;
  std::span<const BatchEntry> entries;
  // Requests of the batch whose end-of-sequence token came out of this iteration.
  std::span<const RequestId> ended;
  Time started;
  // When the engine was due to finish; the report itself comes a little later (timer latency).
  Time planned_end;
};

class EngineBackend {
 public:
  using CompletionHandler = std::function<void(const IterationCompletion&)>;

  virtual ~EngineBackend() = default;
  // A newly admitted sequence, and how many tokens an emulated engine should generate for it
  // (a real engine decides that itself and ignores the number).
  virtual void admit(SequenceHandle handle, int32_t emulated_output_tokens) = 0;
  // Starts an iteration on its engine; returns how long the engine expects it to take.
  virtual Duration launch(const IterationLaunch& launch, Time now) = 0;
  // Forgets every iteration in flight; none of them will be reported (driver shutdown).
  virtual void abandon_all() = 0;
};

}  // namespace gangway
