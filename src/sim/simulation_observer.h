// What a test may watch of a simulation as it runs, event by event, to check the run against a
// model of its own (tests/sim/request_outcome_model.h): every submission and its result, every
// client cancellation with where the request was then, every iteration completion, every
// finished record, and the end of each event. The simulator calls it from its one thread; a
// null observer costs nothing.
#pragma once

#include <cstdint>
#include <optional>

#include "core/outcome.h"
#include "core/time.h"
#include "sched/scheduler.h"
#include "workload/request_source.h"

namespace gangway {

class SimulationObserver {
 public:
  virtual ~SimulationObserver() = default;
  // A request arrived and was submitted (a rejected one's record follows in on_finished).
  virtual void on_submitted(const WorkloadItem& item, const SubmitResult& result, Time now) = 0;
  // The client cancelled the request (or, streaming, disconnected). `in_flight_engine`: the
  // engine whose iteration in flight holds it then (a GPU index, or the GPU count for the gang),
  // if any.
  virtual void on_cancelled(RequestId id, std::optional<uint64_t> in_flight_engine, Time now) = 0;
  // The engine's iteration completed and the scheduler has handled it.
  virtual void on_iteration_done(uint64_t engine, Time now) = 0;
  virtual void on_finished(const RequestRecord& record) = 0;
  // An event and everything it caused (effects, cancellations) are done.
  virtual void after_event(Time now) = 0;
};

}  // namespace gangway
