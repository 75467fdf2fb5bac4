#include "sched/scheduler_state.h"

namespace gangway {

std::optional<int64_t> SchedulerState::smallest_small_queue_key() const {
  std::optional<int64_t> smallest;
  auto consider = [&](const RequestQueue& queue) {
    if (!queue.empty() && (!smallest || queue.front_key() < *smallest)) {
      smallest = queue.front_key();
    }
  };
  for (const SmallModelRuntime& m : small_models) consider(m.queue);
  for (const Replica& r : replicas) consider(r.queue);
  return smallest;
}

}  // namespace gangway
