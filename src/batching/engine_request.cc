#include "batching/engine_request.h"

namespace gangway {

const char* to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kAbort:
      return "abort";
  }
  return "stop";
}

}  // namespace gangway
