#include "server/openai_response.h"

#include <fmt/format.h>

#include "engine/emulated_tokenizer.h"

namespace gangway {
namespace {

const char* finish_reason(const FinishedRequest& finished) {
  return finished.hit_max_tokens ? "length" : "stop";
}

}  // namespace

std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out.append(fmt::format("\\u{:04x}", static_cast<int>(c)));
        } else {
          out.push_back(c);
        }
    }
  }
  return out;
}

AnswerFormatter::AnswerFormatter(Endpoint endpoint, RequestId id, int64_t created_unix_s,
                                 const std::string& model_name)
    : endpoint_(endpoint) {
  const bool chat = endpoint == Endpoint::kChatCompletions;
  response_id_ = fmt::format("{}-{}", chat ? "chatcmpl" : "cmpl", id.value());
  const std::string model = json_escape(model_name);
  head_ = fmt::format(R"({{"id":"{}","object":"{}","created":{},"model":"{}")", response_id_,
                      chat ? "chat.completion.chunk" : "text_completion", created_unix_s, model);
  if (chat) {
    token_prefix_ = "data: " + head_ + R"(,"choices":[{"index":0,"delta":{"content":")";
    token_suffix_ = R"("},"logprobs":null,"finish_reason":null}]})"
                    "\n\n";
  } else {
    token_prefix_ = "data: " + head_ + R"(,"choices":[{"index":0,"text":")";
    token_suffix_ = R"(","logprobs":null,"finish_reason":null}]})"
                    "\n\n";
  }
}

void AnswerFormatter::append_token_event(std::string& out, int32_t index) const {
  if (index == 0 && endpoint_ == Endpoint::kChatCompletions) {
    out.append("data: ").append(head_).append(
        R"(,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,)"
        R"("finish_reason":null}]})"
        "\n\n");
  }
  out.append(token_prefix_).append(emulated_token_text(index)).append(token_suffix_);
}

void AnswerFormatter::append_text_event(std::string& out, std::string_view text, bool first) const {
  if (first && endpoint_ == Endpoint::kChatCompletions) {
    out.append("data: ").append(head_).append(
        R"(,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,)"
        R"("finish_reason":null}]})"
        "\n\n");
  }
  out.append(token_prefix_).append(json_escape(text)).append(token_suffix_);
}

void AnswerFormatter::append_usage(std::string& out, const FinishedRequest& finished) const {
  fmt::format_to(std::back_inserter(out),
                 R"("usage":{{"prompt_tokens":{},"completion_tokens":{},"total_tokens":{}}})",
                 finished.prompt_tokens, finished.output_tokens,
                 finished.prompt_tokens + finished.output_tokens);
}

void AnswerFormatter::append_gangway(std::string& out, const FinishedRequest& finished) const {
  out.append(R"("gangway":{)");
  fmt::format_to(std::back_inserter(out), R"("cached_prompt_tokens":{})",
                 finished.cached_prompt_tokens);
  if (finished.queue_ms) {
    fmt::format_to(std::back_inserter(out), R"(,"queue_ms":{:.3f})", *finished.queue_ms);
  }
  if (finished.engine_ttft_ms) {
    fmt::format_to(std::back_inserter(out), R"(,"engine_ttft_ms":{:.3f})",
                   *finished.engine_ttft_ms);
  }
  out.push_back('}');
}

void AnswerFormatter::append_finish_events(std::string& out, const FinishedRequest& finished,
                                           bool include_usage) const {
  out.append("data: ").append(head_);
  if (endpoint_ == Endpoint::kChatCompletions) {
    fmt::format_to(
        std::back_inserter(out),
        R"(,"choices":[{{"index":0,"delta":{{}},"logprobs":null,"finish_reason":"{}"}}],)",
        finish_reason(finished));
  } else {
    fmt::format_to(std::back_inserter(out),
                   R"(,"choices":[{{"index":0,"text":"","logprobs":null,"finish_reason":"{}"}}],)",
                   finish_reason(finished));
  }
  append_gangway(out, finished);
  out.append("}\n\n");
  if (include_usage) {
    out.append("data: ").append(head_).append(R"(,"choices":[],)");
    append_usage(out, finished);
    out.append("}\n\n");
  }
  out.append("data: [DONE]\n\n");
}

void AnswerFormatter::append_error_event(std::string& out, const std::string& error_json) {
  out.append("data: ").append(error_json).append("\n\ndata: [DONE]\n\n");
}

std::string AnswerFormatter::full_answer(const FinishedRequest& finished,
                                         const std::string* engine_text) const {
  std::string text;
  if (engine_text) {
    text = *engine_text;
  } else {
    text.reserve(static_cast<size_t>(finished.output_tokens) * kEmulatedBytesPerToken);
    for (int32_t i = 0; i < finished.output_tokens; ++i) text.append(emulated_token_text(i));
  }
  std::string out;
  const bool chat = endpoint_ == Endpoint::kChatCompletions;
  // The streaming head names the chunk object; a whole answer is a different object.
  std::string head = head_;
  if (chat) {
    const std::string chunk = "\"chat.completion.chunk\"";
    head.replace(head.find(chunk), chunk.size(), "\"chat.completion\"");
    fmt::format_to(std::back_inserter(out),
                   R"({},"choices":[{{"index":0,"message":{{"role":"assistant","content":"{}"}},)"
                   R"("logprobs":null,"finish_reason":"{}"}}],)",
                   head, json_escape(text), finish_reason(finished));
  } else {
    fmt::format_to(
        std::back_inserter(out),
        R"({},"choices":[{{"index":0,"text":"{}","logprobs":null,"finish_reason":"{}"}}],)", head,
        json_escape(text), finish_reason(finished));
  }
  append_usage(out, finished);
  out.push_back(',');
  append_gangway(out, finished);
  out.push_back('}');
  return out;
}

}  // namespace gangway
