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

}  // namespace gangway
