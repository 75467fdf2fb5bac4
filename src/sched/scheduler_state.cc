#include "sched/scheduler_state.h"

namespace gangway {

std::optional<Time> SchedulerState::oldest_small_queued_arrival() const {
  std::optional<Time> oldest;
  auto consider = [&](const RequestQueue& queue) {
    for (const auto& entry : queue) {
      const Time arrival = sequences[std::get<2>(entry)].spec.arrival;
      if (!oldest || arrival < *oldest) oldest = arrival;
      break;  // queue order is by key; with FCFS keys the head is the oldest
    }
  };
  for (const SmallModelRuntime& m : small_models) consider(m.queue);
  for (const Replica& r : replicas) consider(r.queue);
  return oldest;
}

}  // namespace gangway
