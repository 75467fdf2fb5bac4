// The simulator's future-event list: events ordered by (time, insertion sequence), so that two
// events at the same instant always run in the order they were scheduled. That tie-break is
// decided once, here, and is what makes a seeded run replay identically.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "core/time.h"

namespace gangway {

enum class SimEventKind : uint8_t {
  kArrival,        // the next request of the workload arrives
  kIterationDone,  // an engine finished its iteration (index: GPU, or gpu_count for the gang)
  kWakeup,         // the scheduler asked to be woken (index: the wakeup's generation)
  kFault,          // a scheduled fault starts or ends (index: fault number)
  // A request-level engine answered a pause (index: 2 x engine) or resume (2 x engine + 1).
  kEngineAnswer,
};

struct SimEvent {
  Time time;
  uint64_t sequence = 0;
  SimEventKind kind = SimEventKind::kArrival;
  uint64_t index = 0;
  // Which node of a cluster simulation the event belongs to (0 for a single node).
  uint16_t node = 0;
};

class EventQueue {
 public:
  void push(Time time, SimEventKind kind, uint64_t index, uint16_t node = 0) {
    heap_.push(SimEvent{time, next_sequence_++, kind, index, node});
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const SimEvent& top() const { return heap_.top(); }
  SimEvent pop() {
    SimEvent event = heap_.top();
    heap_.pop();
    return event;
  }

 private:
  struct Later {
    bool operator()(const SimEvent& a, const SimEvent& b) const {
      if (a.time != b.time) return a.time > b.time;
      return a.sequence > b.sequence;
    }
  };
  std::priority_queue<SimEvent, std::vector<SimEvent>, Later> heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace gangway
