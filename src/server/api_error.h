// Errors as the OpenAI-compatible API reports them: an HTTP status and the OpenAI error object
// {"error": {"message", "type", "param", "code"}}, plus Retry-After for overload answers.
//
// Why the type/code pair matters: a cluster router reads them to decide what to do with a
// request this node did not serve. `type` says whose fault it was (invalid_request_error: the
// client's, never retry; overloaded_error / rate_limit_error: ours for now, retry; server_error:
// ours), and `code` names the exact reason (the core's Reason names for scheduler rejections), so
// that "retry on another node now" (503 + Retry-After, e.g. queue_full, draining) is told apart
// from "retry here later" (429 rate_limited) and "never" (400). docs/server.md has the table.
#pragma once

#include <optional>
#include <string>

#include "core/outcome.h"
#include "core/time.h"

namespace gangway {

struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";
  std::string code;  // empty: null
  std::string message;
  std::string param;  // empty: null
  std::optional<int> retry_after_s;

  static ApiError invalid(std::string message, std::string param = "",
                          std::string code = "invalid_value") {
    return ApiError{
        400,         "invalid_request_error", std::move(code), std::move(message), std::move(param),
        std::nullopt};
  }
  // The client's fault with another status than 400 (404 unknown route, 413 body too large, ...).
  static ApiError request_error(int status, std::string code, std::string message) {
    return ApiError{status,      "invalid_request_error", std::move(code), std::move(message), "",
                    std::nullopt};
  }
};

// The answer for a request the scheduler ended without completing it (rejected at admission,
// dropped, cancelled, failed). retry_after_s is used for the retryable reasons.
ApiError error_for_reason(Reason reason, int retry_after_s);

// {"error": {...}} as compact JSON.
std::string error_body(const ApiError& error);

// A duration for a message, in seconds without float noise: "15", "0.5", "0.001" (rounded to
// the millisecond).
std::string seconds_text(Duration duration);

}  // namespace gangway
