#include "sim/fault_spec.h"

namespace gangway {

const char* to_string(FaultKind kind) {
  switch (kind) {
    case FaultKind::kGpuLoss:
      return "gpu_loss";
    case FaultKind::kOverrun:
      return "overrun";
    case FaultKind::kStall:
      return "stall";
  }
  return "?";
}

Time faulted_end(std::span<const FaultSpec> faults, EngineRef engine, Duration cost, Time now) {
  auto touches = [&](const FaultSpec& fault) {
    return engine.gang || !fault.gpu || *fault.gpu == engine.gpu;
  };
  double factor = 1.0;
  for (const FaultSpec& fault : faults) {
    if (fault.kind == FaultKind::kOverrun && touches(fault) && now >= fault.at &&
        now < fault.at + *fault.duration) {
      factor *= fault.factor;
    }
  }
  Time end = now + seconds_to_duration(to_seconds(cost) * factor);
  for (const FaultSpec& fault : faults) {
    if (fault.kind != FaultKind::kStall || !touches(fault)) continue;
    const Time stall_end = fault.at + *fault.duration;
    if (now >= fault.at && now < stall_end) {
      end = stall_end + (end - now);  // starts when the stall is over
    } else if (now < fault.at && end > fault.at) {
      end += *fault.duration;  // held up by the whole stall
    }
  }
  return end;
}

}  // namespace gangway
