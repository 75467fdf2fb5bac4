// What the request-level core asks its driver to do after an event: send requests to engines,
// abort the ones it ended while their engine still runs them, pause and resume engines, and
// report the requests that ended (exactly one RequestRecord per request). The driver carries
// them out in this order and clears them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ids.h"
#include "core/outcome.h"
#include "core/time.h"
#include "sched/request_level/engine_slot.h"

namespace gangway {

struct RequestDispatch {
  RequestId id;
  EngineIndex engine = 0;
};

// The request ended in the core (cancelled, failed, stopped) while its engine may still run it:
// close its upstream call, which makes the engine abort it.
struct RequestAbort {
  RequestId id;
  EngineIndex engine = 0;
};

struct EngineControl {
  enum class Kind : uint8_t { kPause, kResume };
  EngineIndex engine = 0;
  Kind kind = Kind::kPause;
};

// Which tier holds the GPUs, for logs and metrics.
enum class EngineTier : uint8_t { kSmall, kLarge };

const char* to_string(EngineTier tier);

struct TierChange {
  EngineTier holder = EngineTier::kSmall;
  Time at;
};

struct RequestLevelEffects {
  std::vector<EngineControl> controls;
  std::vector<RequestAbort> aborts;
  std::vector<RequestDispatch> dispatches;
  std::vector<RequestRecord> finished;
  std::vector<TierChange> tier_changes;

  void clear() {
    controls.clear();
    aborts.clear();
    dispatches.clear();
    finished.clear();
    tier_changes.clear();
  }
  bool empty() const {
    return controls.empty() && aborts.empty() && dispatches.empty() && finished.empty() &&
           tier_changes.empty();
  }
};

}  // namespace gangway
