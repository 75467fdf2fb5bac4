// What the test engine reads from a POST /v1/completions or /v1/chat/completions body: the
// fields that decide a request's work (prompt length, output length, streaming), checked the way
// vLLM checks them. Everything else a client sends (temperature, top_p, stop, ...) is accepted
// and has no effect: the emulated model has no vocabulary.
//
// Prompt length, without a tokenizer: 4 bytes of UTF-8 text per token (rounded up), a list of
// token ids counts its ids; a chat counts its messages' text plus 4 tokens per message for the
// chat template's role markers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "test_engine/engine_api_error.h"

namespace gangway {

enum class ApiEndpoint : uint8_t { kCompletions, kChatCompletions };

struct GenerationParameters {
  ApiEndpoint endpoint = ApiEndpoint::kCompletions;
  int32_t prompt_tokens = 0;
  // Given by the request (max_tokens, or max_completion_tokens for chat); completions default to
  // 16 as vLLM's do; a chat without one may use the rest of the context.
  std::optional<int32_t> max_tokens;
  // vLLM's min_tokens: the emulated model's end-of-sequence comes as soon as it is allowed, so a
  // request with min_tokens gets exactly that many tokens (finish_reason "stop"), max_tokens
  // permitting.
  std::optional<int32_t> min_tokens;
  // vLLM's ignore_eos. Unset, the engine acts as if it were true when the request gives
  // max_tokens and no min_tokens (exactly max_tokens tokens, "length"); with ignore_eos false and
  // no min_tokens, or with neither max_tokens nor min_tokens, the model stops at a length drawn
  // from --seed ("stop").
  std::optional<bool> ignore_eos;
  bool stream = false;
  bool include_usage = false;
};

// Bodies nested deeper than this are refused before parsing (the parser recurses).
inline constexpr int kMaxJsonDepth = 64;

// The request, or the error vLLM would answer (400 for a bad body, 404 for another model's name).
std::variant<GenerationParameters, EngineApiError> parse_generation_parameters(
    ApiEndpoint endpoint, std::string_view body, const std::string& served_model);

}  // namespace gangway
