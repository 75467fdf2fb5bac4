#include "server/api_error.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace gangway {

ApiError error_for_reason(Reason reason, int retry_after_s) {
  ApiError error;
  error.code = to_string(reason);
  switch (reason) {
    case Reason::kRateLimited:
      error.status = 429;
      error.type = "rate_limit_error";
      error.message = "Rate limit reached for this tenant or class; retry after the given delay.";
      error.retry_after_s = retry_after_s;
      break;
    case Reason::kDeadlineExpired:
      error.status = 504;
      error.type = "timeout_error";
      error.message = "The request waited past its deadline before its first token.";
      break;
    case Reason::kBadRequest:
      error.status = 400;
      error.type = "invalid_request_error";
      error.message =
          "The request can never be served on this node (its prompt and max_tokens do not fit "
          "the model's context or KV memory).";
      break;
    case Reason::kDeadlineNeverMeetable:
      error.status = 400;
      error.type = "invalid_request_error";
      error.message =
          "The request can never meet its time-to-first-token target on this node: its prompt's "
          "prefill alone, on an idle GPU, takes longer than the target of its SLO class (or its "
          "own ttft_deadline_ms). Do not retry it as it is: shorten the prompt, or send it in a "
          "class with a looser target.";
      break;
    case Reason::kClientCancelled:
      error.status = 499;
      error.type = "invalid_request_error";
      error.message = "The client cancelled the request.";
      break;
    case Reason::kDriverStopped:
      error.status = 503;
      error.type = "overloaded_error";
      error.message = "The server stopped (shutdown grace period over) before the request ended.";
      error.retry_after_s = retry_after_s;
      break;
    case Reason::kNone:
      error.status = 500;
      error.type = "server_error";
      error.message = "The request ended without an answer.";
      break;
    default:
      // The reasons to send the request to another node (retry_elsewhere, the one list of them;
      // a rate limit, handled above, is retried here later instead).
      if (!retry_elsewhere(reason)) {
        error.status = 500;
        error.type = "server_error";
        error.message = std::string("The request ended (") + to_string(reason) + ").";
        break;
      }
      error.status = 503;
      error.type = "overloaded_error";
      error.message = std::string("This node cannot serve the request now (") + to_string(reason) +
                      "); send it to another node or retry after the given delay.";
      error.retry_after_s = retry_after_s;
      break;
  }
  return error;
}

std::string error_body(const ApiError& error) {
  nlohmann::json object = {
      {"message", error.message}, {"type", error.type}, {"param", nullptr}, {"code", nullptr}};
  if (!error.param.empty()) object["param"] = error.param;
  if (!error.code.empty()) object["code"] = error.code;
  // Messages repeat client text (already made valid UTF-8 by shown_client_text); replacing any
  // invalid byte that still slips in keeps the strict writer from throwing.
  return nlohmann::json{{"error", object}}.dump(-1, ' ', false,
                                                nlohmann::json::error_handler_t::replace);
}

std::string seconds_text(Duration duration) {
  const int64_t ms = (duration.count() + 500000) / 1000000;
  std::string text = std::to_string(ms / 1000);
  if (const int64_t fraction = ms % 1000; fraction != 0) {
    char digits[8];
    std::snprintf(digits, sizeof digits, ".%03d", static_cast<int>(fraction));
    std::string decimals(digits);
    while (decimals.back() == '0') decimals.pop_back();
    text += decimals;
  }
  return text;
}

}  // namespace gangway
