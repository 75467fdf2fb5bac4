#include "core/outcome.h"

namespace gangway {

const char* to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::kCompleted:
      return "completed";
    case Outcome::kRejected:
      return "rejected";
    case Outcome::kCancelled:
      return "cancelled";
    case Outcome::kFailed:
      return "failed";
  }
  return "?";
}

const char* to_string(Reason reason) {
  switch (reason) {
    case Reason::kNone:
      return "none";
    case Reason::kQueueFull:
      return "queue_full";
    case Reason::kDeadlineUnmeetable:
      return "deadline_unmeetable";
    case Reason::kRateLimited:
      return "rate_limited";
    case Reason::kShed:
      return "shed";
    case Reason::kNoCapacity:
      return "no_capacity";
    case Reason::kDraining:
      return "draining";
    case Reason::kBadRequest:
      return "bad_request";
    case Reason::kClientCancelled:
      return "client_cancelled";
    case Reason::kDeadlineExpired:
      return "deadline_expired";
    case Reason::kEngineFailed:
      return "engine_failed";
    case Reason::kDeadlineNeverMeetable:
      return "deadline_never_meetable";
    case Reason::kDriverStopped:
      return "driver_stopped";
  }
  return "?";
}

bool retry_elsewhere(Reason reason) {
  switch (reason) {
    case Reason::kQueueFull:
    case Reason::kDeadlineUnmeetable:
    case Reason::kShed:
    case Reason::kNoCapacity:
    case Reason::kDraining:
    case Reason::kEngineFailed:
    case Reason::kRateLimited:
      return true;
    default:
      return false;
  }
}

bool says_node_busy(Reason reason) {
  return reason == Reason::kQueueFull || reason == Reason::kDeadlineUnmeetable ||
         reason == Reason::kShed;
}

RequestRecord rejected_record(const RequestSpec& spec, Reason reason, Time now) {
  RequestRecord record;
  record.id = spec.id;
  record.model = spec.model;
  record.slo_class = spec.slo_class;
  record.tenant = spec.tenant;
  record.outcome = Outcome::kRejected;
  record.reason = reason;
  record.arrival = spec.arrival;
  record.finished = now;
  record.prompt_tokens = spec.prompt_tokens;
  return record;
}

}  // namespace gangway
