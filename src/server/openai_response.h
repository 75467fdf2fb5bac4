// The OpenAI wire format of generated answers, written by hand for the hot path: every streamed
// token is one SSE event ("data: {...}\n\n") and at 1,600 requests/s that is tens of thousands
// of events a second, so the invariant part of each event is rendered once per request and each
// token only appends its text. Non-streaming answers and the closing events are rare and use the
// same helpers.
//
// Shapes (what OpenAI's API and vLLM send):
//  - completions: object "text_completion", choices[0].text; chat: "chat.completion.chunk",
//    choices[0].delta.content (the first chunk also carries delta.role), and "chat.completion"
//    with choices[0].message when not streaming;
//  - the chunk that carries finish_reason ("stop" or "length") also carries a "gangway" object
//    (queue_ms, engine_ttft_ms, cached_prompt_tokens: what the load generator needs to tell the
//    server's own latency from the emulated engine's), which OpenAI clients ignore;
//  - with stream_options.include_usage, a last chunk with empty choices and usage; then
//    "data: [DONE]".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "server/openai_request.h"
#include "server/stream_event.h"

namespace gangway {

// JSON string contents for `text` (without the quotes).
std::string json_escape(std::string_view text);

class AnswerFormatter {
 public:
  AnswerFormatter(Endpoint endpoint, RequestId id, int64_t created_unix_s,
                  const std::string& model_name);

  const std::string& response_id() const { return response_id_; }

  // SSE event(s) for the index-th generated token (0-based); the first chat token also carries
  // the assistant role.
  void append_token_event(std::string& out, int32_t index) const;
  // SSE event(s) for text an engine process generated (request-level mode); `first`: the
  // answer's first text (a chat answer's first chunk also carries the assistant role).
  void append_text_event(std::string& out, std::string_view text, bool first) const;
  // The closing events of a completed stream: the finish_reason chunk, the usage chunk if asked
  // for, and [DONE].
  void append_finish_events(std::string& out, const FinishedRequest& finished,
                            bool include_usage) const;
  // An error inside a started stream (vLLM's way): data: {"error": ...} then [DONE].
  static void append_error_event(std::string& out, const std::string& error_json);

  // The whole non-streaming answer body: the emulated text, or `text` (an engine's) when given.
  std::string full_answer(const FinishedRequest& finished, const std::string* text = nullptr) const;

 private:
  void append_usage(std::string& out, const FinishedRequest& finished) const;
  void append_gangway(std::string& out, const FinishedRequest& finished) const;

  Endpoint endpoint_;
  std::string response_id_;
  // `data: {"id":...,"model":...,"choices":[{"index":0,` up to where a token's text goes.
  std::string token_prefix_;
  std::string token_suffix_;
  std::string head_;  // {"id":..,"object":..,"created":..,"model":.. (no closing brace)
};

}  // namespace gangway
