// The workload's next arrival, read one ahead. A simulator keeps exactly one arrival event in its
// queue and reads the following item only when that event runs, so a trace of any length streams
// through in constant memory. Arrivals at or after the end of the arrival window are never
// scheduled: the run drains from there.
#pragma once

#include <optional>

#include "core/time.h"
#include "sim/event_queue.h"
#include "workload/request_source.h"

namespace gangway {

class ArrivalFeed {
 public:
  // `source` is not owned and must outlive the feed.
  ArrivalFeed(RequestSource& source, Time window_end);

  // Reads the next item and schedules its arrival event, never before `now` (a trace may hold
  // arrivals out of order). False when the workload has ended or left the window.
  bool schedule_next(Time now, EventQueue& events);
  // Whether an arrival event is scheduled and not yet taken.
  bool pending() const { return next_.has_value(); }
  // The item of the arrival event that just ran.
  WorkloadItem take();

 private:
  RequestSource& source_;
  Time window_end_;
  std::optional<WorkloadItem> next_;
};

}  // namespace gangway
