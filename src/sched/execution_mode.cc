#include "sched/execution_mode.h"

namespace gangway {

const char* to_string(ExecutionMode mode) {
  return mode == ExecutionMode::kLease ? "lease" : "exclusive";
}

const char* to_string(TierSplit split) {
  return split == TierSplit::kWeights ? "weights" : "demand";
}

}  // namespace gangway
