// The OpenAI wire format of one answer, in the shapes vLLM's OpenAI server sends:
//  - completions: object "text_completion", choices[0].text; each streamed chunk carries one
//    token's text and finish_reason null, the last token's chunk carries finish_reason ("stop",
//    "length" or "abort") and stop_reason null;
//  - chat: a first chunk with delta {"role": "assistant", "content": ""}, then one chunk per
//    token with delta.content, object "chat.completion.chunk"; not streamed, "chat.completion"
//    with choices[0].message;
//  - streamed with stream_options.include_usage, a last chunk with empty choices and usage;
//    then "data: [DONE]".
// The emulated model's index-th token is always the same 4-byte word (token_text).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "test_engine/generation_parameters.h"

namespace gangway {

// The text of the emulated model's index-th output token: 4 bytes.
std::string_view token_text(int32_t index);

class AnswerRenderer {
 public:
  AnswerRenderer(ApiEndpoint endpoint, std::string response_id, int64_t created_unix_s,
                 const std::string& model);

  const std::string& response_id() const { return response_id_; }

  // The SSE events for output token `index` (0-based): the chat's role chunk before the first,
  // and finish_reason on the chunk when it is the last (nullptr: not the last).
  void append_token_events(std::string& out, int32_t index, const char* finish_reason) const;
  // A chunk that only ends the answer (an abort between tokens).
  void append_finish_event(std::string& out, const char* finish_reason) const;
  void append_usage_event(std::string& out, int32_t prompt_tokens, int32_t output_tokens) const;
  static void append_done(std::string& out);
  // The whole answer when not streamed.
  std::string full_answer(int32_t output_tokens, const char* finish_reason,
                          int32_t prompt_tokens) const;

 private:
  void append_choice_chunk(std::string& out, std::string_view text, bool role,
                           const char* finish_reason) const;

  ApiEndpoint endpoint_;
  std::string response_id_;
  std::string head_;  // {"id":...,"object":...,"created":...,"model":... (no closing brace)
};

}  // namespace gangway
