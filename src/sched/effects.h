// What the scheduler wants done after an event: iterations to start, requests that have ended
// (each exactly once) and gang-phase transitions for timelines and logs. The driver executes and
// then clears them; the buffers keep their capacity so steady state allocates nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "core/outcome.h"
#include "sched/iteration.h"

namespace gangway {

enum class GangEventKind : uint8_t { kPending, kStarted, kReleased };

struct GangEvent {
  GangEventKind kind;
  Time time;
};

struct Effects {
  std::vector<IterationLaunch> launches;
  std::vector<RequestRecord> finished;
  std::vector<GangEvent> gang_events;

  void clear() {
    launches.clear();
    finished.clear();
    gang_events.clear();
  }
  bool empty() const { return launches.empty() && finished.empty() && gang_events.empty(); }
};

}  // namespace gangway
