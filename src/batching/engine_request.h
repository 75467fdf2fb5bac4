// What the continuous-batching engine model takes in and gives back for one request: plain data,
// no I/O. The test engine's HTTP side (src/test_engine) turns an OpenAI request into an
// EngineRequest and each RequestUpdate into tokens on the wire.
#pragma once

#include <cstdint>

namespace gangway {

// Why a request ended, as vLLM's finish_reason says it: "stop" (the model ended it: the engine's
// drawn output length), "length" (max_tokens reached), "abort" (aborted by the client, by
// abort(), or by a pause in abort mode).
enum class FinishReason : uint8_t { kStop, kLength, kAbort };

const char* to_string(FinishReason reason);

struct EngineRequest {
  uint64_t id = 0;
  int32_t prompt_tokens = 0;
  // The most output tokens the request may get (its max_tokens; always >= 1).
  int32_t max_tokens = 1;
  // Output tokens after which the emulated model "stops" by itself (an end-of-sequence token);
  // at or above max_tokens it never does, and the request ends with "length".
  int32_t stop_after_tokens = 1;
};

// What one iteration (or an abort) did to one request.
struct RequestUpdate {
  uint64_t id = 0;
  // Output tokens this update adds (0 or 1 per iteration; 0 for an abort).
  int32_t new_tokens = 0;
  // Output tokens the request has after this update.
  int32_t output_tokens = 0;
  // This update carries the request's first output token.
  bool first_token = false;
  bool finished = false;
  FinishReason reason = FinishReason::kStop;  // meaningful only when finished
  int32_t prompt_tokens = 0;
};

}  // namespace gangway
