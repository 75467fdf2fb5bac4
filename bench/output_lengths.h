// Output lengths for the decision-path benchmarks' requests: spread evenly over 1-128 tokens
// (mean 64.5) by a hash of the request id, so deterministic. With one length for every request,
// the sequences admitted together at the start also finished together, forever: every 64
// iterations each GPU replaced its whole batch in one event, and those events (200+ admissions
// each) were the benchmarks' p99. Spread lengths let completions drift apart, as in service.
#pragma once

#include <cstdint>

#include "core/mix64.h"

namespace gangway {

inline int32_t spread_output_tokens(uint64_t request_id) {
  return 1 + static_cast<int32_t>(mix64(request_id + 0x9e3779b97f4a7c15ULL) % 128);
}

}  // namespace gangway
