// Faults the simulator injects (the scenario's `faults:` list), to check that deadlines, leases
// and admission adapt and that every request still ends exactly once:
//   gpu_loss  the GPU fails at `at` (its iteration in flight is lost) and comes back, empty,
//             after `duration` (never, if no duration is given)
//   overrun   iterations starting in [at, at + duration) on the GPU (every GPU if none is named;
//             the gang's iterations whenever the GPU is part of it) take `factor` times as long
//             as the cost model says
//   stall     the engine on the GPU makes no progress during [at, at + duration): an iteration
//             in flight then ends that much later
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/ids.h"
#include "core/time.h"
#include "sched/iteration.h"

namespace gangway {

enum class FaultKind : uint8_t { kGpuLoss, kOverrun, kStall };

struct FaultSpec {
  FaultKind kind = FaultKind::kGpuLoss;
  std::optional<GpuId> gpu;  // required for gpu_loss and stall
  Time at;
  std::optional<Duration> duration;  // required for overrun and stall
  double factor = 1.0;               // overrun only
};

const char* to_string(FaultKind kind);

// When an iteration launched on `engine` at `now`, which the cost model says takes `cost`, ends
// under the overruns and stalls among `faults` (gpu_loss faults are the driver's to apply).
// The simulator and `gangway serve`'s emulated GPUs both use it.
Time faulted_end(std::span<const FaultSpec> faults, EngineRef engine, Duration cost, Time now);

}  // namespace gangway
