#include "core/gpu_activity.h"

namespace gangway {

const char* to_string(GpuActivity activity) {
  switch (activity) {
    case GpuActivity::kRunningSmall:
      return "running_small";
    case GpuActivity::kRunningLarge:
      return "running_large";
    case GpuActivity::kGangBarrier:
      return "gang_barrier";
    case GpuActivity::kIdleWhileWaiting:
      return "idle_while_waiting";
    case GpuActivity::kIdle:
      return "idle";
    case GpuActivity::kFailed:
      return "failed";
  }
  return "?";
}

}  // namespace gangway
