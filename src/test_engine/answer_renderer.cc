#include "test_engine/answer_renderer.h"

#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>

namespace gangway {
namespace {

std::string json_string(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string finish_json(const char* finish_reason) {
  return finish_reason == nullptr ? "null" : fmt::format("\"{}\"", finish_reason);
}

void append_usage(std::string& out, int32_t prompt_tokens, int32_t output_tokens) {
  fmt::format_to(std::back_inserter(out),
                 R"("usage":{{"prompt_tokens":{},"total_tokens":{},"completion_tokens":{},)"
                 R"("prompt_tokens_details":null}})",
                 prompt_tokens, prompt_tokens + output_tokens, output_tokens);
}

}  // namespace

std::string_view token_text(int32_t index) {
  static constexpr std::array<std::string_view, 8> kWords = {" the", " GPU", " ran", " one",
                                                             " big", " job", " and", " won"};
  return kWords[static_cast<size_t>(index) % kWords.size()];
}

AnswerRenderer::AnswerRenderer(ApiEndpoint endpoint, std::string response_id,
                               int64_t created_unix_s, const std::string& model)
    : endpoint_(endpoint), response_id_(std::move(response_id)) {
  const bool chat = endpoint_ == ApiEndpoint::kChatCompletions;
  head_ = fmt::format(R"({{"id":"{}","object":"{}","created":{},"model":{})", response_id_,
                      chat ? "chat.completion.chunk" : "text_completion", created_unix_s,
                      json_string(model));
}

void AnswerRenderer::append_choice_chunk(std::string& out, std::string_view text, bool role,
                                         const char* finish_reason) const {
  out.append("data: ").append(head_);
  const std::string finish = finish_json(finish_reason);
  if (endpoint_ == ApiEndpoint::kChatCompletions) {
    const std::string delta =
        role ? R"({"role":"assistant","content":""})"
             : (text.empty() ? std::string("{}") : fmt::format(R"({{"content":"{}"}})", text));
    fmt::format_to(std::back_inserter(out),
                   R"(,"choices":[{{"index":0,"delta":{},"logprobs":null,"finish_reason":{})",
                   delta, finish);
  } else {
    fmt::format_to(std::back_inserter(out),
                   R"(,"choices":[{{"index":0,"text":"{}","logprobs":null,"finish_reason":{})",
                   text, finish);
  }
  if (finish_reason != nullptr) out.append(R"(,"stop_reason":null)");
  out.append("}]}\n\n");
}

void AnswerRenderer::append_token_events(std::string& out, int32_t index,
                                         const char* finish_reason) const {
  if (index == 0 && endpoint_ == ApiEndpoint::kChatCompletions) {
    append_choice_chunk(out, "", /*role=*/true, nullptr);
  }
  append_choice_chunk(out, token_text(index), /*role=*/false, finish_reason);
}

void AnswerRenderer::append_finish_event(std::string& out, const char* finish_reason) const {
  append_choice_chunk(out, "", /*role=*/false, finish_reason);
}

void AnswerRenderer::append_usage_event(std::string& out, int32_t prompt_tokens,
                                        int32_t output_tokens) const {
  out.append("data: ").append(head_).append(R"(,"choices":[],)");
  append_usage(out, prompt_tokens, output_tokens);
  out.append("}\n\n");
}

void AnswerRenderer::append_done(std::string& out) {
  out.append("data: [DONE]\n\n");
}

std::string AnswerRenderer::full_answer(int32_t output_tokens, const char* finish_reason,
                                        int32_t prompt_tokens) const {
  std::string text;
  text.reserve(static_cast<size_t>(output_tokens) * 4);
  for (int32_t i = 0; i < output_tokens; ++i) text.append(token_text(i));
  std::string head = head_;
  std::string out;
  if (endpoint_ == ApiEndpoint::kChatCompletions) {
    const std::string chunk = "\"chat.completion.chunk\"";
    head.replace(head.find(chunk), chunk.size(), "\"chat.completion\"");
    fmt::format_to(std::back_inserter(out),
                   R"({},"choices":[{{"index":0,"message":{{"role":"assistant","content":"{}",)"
                   R"("tool_calls":[]}},"logprobs":null,"finish_reason":{},"stop_reason":null}}],)",
                   head, text, finish_json(finish_reason));
  } else {
    fmt::format_to(std::back_inserter(out),
                   R"({},"choices":[{{"index":0,"text":"{}","logprobs":null,"finish_reason":{},)"
                   R"("stop_reason":null,"prompt_logprobs":null}}],)",
                   head, text, finish_json(finish_reason));
  }
  append_usage(out, prompt_tokens, output_tokens);
  out.push_back('}');
  return out;
}

}  // namespace gangway
