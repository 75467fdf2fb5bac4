// How a request ended. Every request that reaches the scheduler ends with exactly one of these;
// the reason tells a cluster router what to do next (retry elsewhere now, or never).
#pragma once

#include <cstdint>
#include <optional>

#include "core/ids.h"
#include "core/request.h"
#include "core/time.h"

namespace gangway {

enum class Outcome : uint8_t { kCompleted, kRejected, kCancelled, kFailed };

enum class Reason : uint8_t {
  kNone,                // completed normally
  kQueueFull,           // a hard queue cap was reached (retry elsewhere)
  kDeadlineUnmeetable,  // predicted TTFT exceeds the class target (retry elsewhere)
  kRateLimited,         // tenant or class token bucket empty (retry later)
  kShed,                // dropped by the overload ladder (retry elsewhere)
  kNoCapacity,          // the model cannot run on this node now, e.g. a GPU is lost (elsewhere)
  kDraining,            // the node is shutting down (retry elsewhere)
  kBadRequest,          // the request can never be served here (do not retry)
  kClientCancelled,     // the client went away
  kDeadlineExpired,     // waited past its deadline after admission and was dropped
  kEngineFailed,        // the GPU running it failed
  // Its own prefill alone, on an idle engine of this node, takes longer than its TTFT target:
  // no retry here or on a node like this one can meet it (do not retry).
  kDeadlineNeverMeetable,
  kDriverStopped,  // the driver stopped (simulation end, shutdown grace expired)
};
// Number of Reason values: kDriverStopped must stay the last enumerator (a test checks that
// to_string knows no Reason past it).
inline constexpr int kReasonCount = static_cast<int>(Reason::kDriverStopped) + 1;

const char* to_string(Outcome outcome);
const char* to_string(Reason reason);
// Whether a router should send the same request to another node right away.
bool retry_elsewhere(Reason reason);
// Whether a rejection says the node is busy (its queue is full, it predicts a missed target, the
// overload ladder sheds): the rejections that count as SLO misses for the weight shift and leave
// no headroom in load reports.
bool says_node_busy(Reason reason);

// The life of one request, handed to metrics when it ends. Times the request never reached
// (a rejected request has no first token) are empty.
struct RequestRecord {
  RequestId id;
  ModelId model;
  SloClassId slo_class;
  TenantId tenant;
  Outcome outcome = Outcome::kCompleted;
  Reason reason = Reason::kNone;
  Time arrival;
  std::optional<Time> first_scheduled;
  std::optional<Time> first_token;
  Time finished;
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;
  int32_t cached_prompt_tokens = 0;
  // Where its SM iterations ran (the last GPU, for small models).
  std::optional<GpuId> gpu;
  int32_t preemptions = 0;
  // Whether the request met its SLO class targets (completed and on time).
  bool slo_met = false;
  // Whether it completed with its first token within its class's TTFT target (and its own TTFT
  // deadline, if it named one), whatever its TPOT: the measure the admission targets are set on.
  bool ttft_met = false;
  // Rejections a router may retry: how long until this node expects to be able to take it.
  std::optional<Duration> retry_after;
  // Admission served it in this lower class instead of slo_class, the one it named (reports
  // count it, and judge its SLO, under the class it named).
  std::optional<SloClassId> downgraded_to;

  std::optional<Duration> queue_delay() const {
    if (!first_scheduled) return std::nullopt;
    return *first_scheduled - arrival;
  }
  std::optional<Duration> ttft() const {
    if (!first_token) return std::nullopt;
    return *first_token - arrival;
  }
  Duration e2e() const { return finished - arrival; }
  // Mean time per output token after the first; needs at least two tokens.
  std::optional<Duration> tpot() const {
    if (!first_token || output_tokens < 2) return std::nullopt;
    return (finished - *first_token) / (output_tokens - 1);
  }
};

// The record of a request turned away at arrival (`now`), before anything ran.
RequestRecord rejected_record(const RequestSpec& spec, Reason reason, Time now);

}  // namespace gangway
