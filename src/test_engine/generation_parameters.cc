#include "test_engine/generation_parameters.h"

#include <nlohmann/json.hpp>

#include "http/json_depth.h"

namespace gangway {
namespace {

using nlohmann::json;

constexpr int32_t kBytesPerToken = 4;
constexpr int32_t kChatTokensPerMessage = 4;
// vLLM's CompletionRequest default.
constexpr int32_t kDefaultCompletionMaxTokens = 16;
// Prompts longer than this are refused as too long whatever the model (no context is larger).
constexpr int64_t kMaxPromptTokens = 1LL << 30;

int64_t text_tokens(const std::string& text) {
  return (static_cast<int64_t>(text.size()) + kBytesPerToken - 1) / kBytesPerToken;
}

bool is_token_id_list(const json& value) {
  if (!value.is_array() || value.empty()) return false;
  for (const json& item : value) {
    if (!item.is_number_integer()) return false;
  }
  return true;
}

// The prompt's tokens, or an error message.
std::variant<int64_t, std::string> completion_prompt_tokens(const json& body) {
  const auto prompt = body.find("prompt");
  if (prompt == body.end() || prompt->is_null()) return std::string("prompt is required");
  const json* single = &*prompt;
  if (prompt->is_array() && !is_token_id_list(*prompt)) {
    if (prompt->size() != 1) {
      return std::string(
          "the test engine takes one prompt per request (a string or a list of token ids)");
    }
    single = &(*prompt)[0];
  }
  if (single->is_string()) {
    const int64_t tokens = text_tokens(single->get_ref<const std::string&>());
    if (tokens < 1) return std::string("prompt cannot be empty");
    return tokens;
  }
  if (is_token_id_list(*single)) return static_cast<int64_t>(single->size());
  return std::string("prompt must be a string or a list of token ids");
}

std::variant<int64_t, std::string> chat_prompt_tokens(const json& body) {
  const auto messages = body.find("messages");
  if (messages == body.end() || !messages->is_array() || messages->empty()) {
    return std::string("messages must be a non-empty list of messages");
  }
  int64_t tokens = 0;
  for (const json& message : *messages) {
    if (!message.is_object()) return std::string("each message must be an object");
    const auto role = message.find("role");
    if (role == message.end() || !role->is_string()) {
      return std::string("each message needs a role (a string)");
    }
    tokens += kChatTokensPerMessage;
    const auto content = message.find("content");
    if (content == message.end() || content->is_null()) continue;
    if (content->is_string()) {
      tokens += text_tokens(content->get_ref<const std::string&>());
    } else if (content->is_array()) {
      for (const json& part : *content) {
        if (!part.is_object()) return std::string("each content part must be an object");
        const auto text = part.find("text");
        if (text != part.end() && text->is_string()) {
          tokens += text_tokens(text->get_ref<const std::string&>());
        }
      }
    } else {
      return std::string("message content must be a string or a list of parts");
    }
  }
  return tokens;
}

}  // namespace

std::variant<GenerationParameters, EngineApiError> parse_generation_parameters(
    ApiEndpoint endpoint, std::string_view body, const std::string& served_model) {
  if (json_nests_deeper_than(body, kMaxJsonDepth)) {
    return EngineApiError::bad_request("the JSON body nests more than " +
                                       std::to_string(kMaxJsonDepth) + " levels deep");
  }
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return EngineApiError::bad_request("the body is not valid JSON");
  if (!parsed.is_object()) return EngineApiError::bad_request("the body must be a JSON object");

  GenerationParameters request;
  request.endpoint = endpoint;
  if (const auto model = parsed.find("model"); model != parsed.end() && !model->is_null()) {
    if (!model->is_string()) return EngineApiError::bad_request("model must be a string", "model");
    const std::string& name = model->get_ref<const std::string&>();
    if (name != served_model) {
      return EngineApiError::not_found("The model `" + name + "` does not exist.");
    }
  }
  const auto tokens = endpoint == ApiEndpoint::kCompletions ? completion_prompt_tokens(parsed)
                                                            : chat_prompt_tokens(parsed);
  if (const auto* message = std::get_if<std::string>(&tokens)) {
    return EngineApiError::bad_request(
        *message, endpoint == ApiEndpoint::kCompletions ? "prompt" : "messages");
  }
  const int64_t prompt_tokens = std::get<int64_t>(tokens);
  if (prompt_tokens > kMaxPromptTokens) {
    return EngineApiError::bad_request("the prompt is too long");
  }
  request.prompt_tokens = static_cast<int32_t>(prompt_tokens);

  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (endpoint == ApiEndpoint::kCompletions && std::string_view(key) != "max_tokens") continue;
    const auto value = parsed.find(key);
    if (value == parsed.end() || value->is_null()) continue;
    if (!value->is_number_integer() || value->get<int64_t>() < 1 ||
        value->get<int64_t>() > kMaxPromptTokens) {
      return EngineApiError::bad_request(std::string(key) + " must be an integer of at least 1",
                                         key);
    }
    request.max_tokens = static_cast<int32_t>(value->get<int64_t>());
  }
  if (!request.max_tokens && endpoint == ApiEndpoint::kCompletions) {
    request.max_tokens = kDefaultCompletionMaxTokens;
  }
  if (const auto n = parsed.find("n"); n != parsed.end() && !n->is_null()) {
    if (!n->is_number_integer() || n->get<int64_t>() != 1) {
      return EngineApiError::bad_request("the test engine generates one choice: n must be 1", "n");
    }
  }
  if (const auto stream = parsed.find("stream"); stream != parsed.end() && !stream->is_null()) {
    if (!stream->is_boolean()) return EngineApiError::bad_request("stream must be a boolean");
    request.stream = stream->get<bool>();
  }
  if (const auto options = parsed.find("stream_options");
      options != parsed.end() && !options->is_null()) {
    if (!request.stream) {
      return EngineApiError::bad_request("Stream options can only be defined when `stream=True`.",
                                         "stream_options");
    }
    if (!options->is_object()) {
      return EngineApiError::bad_request("stream_options must be an object", "stream_options");
    }
    if (const auto usage = options->find("include_usage");
        usage != options->end() && !usage->is_null()) {
      if (!usage->is_boolean()) {
        return EngineApiError::bad_request("stream_options.include_usage must be a boolean",
                                           "stream_options");
      }
      request.include_usage = usage->get<bool>();
    }
  }
  if (const auto ignore = parsed.find("ignore_eos"); ignore != parsed.end() && !ignore->is_null()) {
    if (!ignore->is_boolean()) {
      return EngineApiError::bad_request("ignore_eos must be a boolean", "ignore_eos");
    }
    request.ignore_eos = ignore->get<bool>();
  }
  if (const auto min = parsed.find("min_tokens"); min != parsed.end() && !min->is_null()) {
    if (!min->is_number_integer() || min->get<int64_t>() < 0 ||
        min->get<int64_t>() > kMaxPromptTokens) {
      return EngineApiError::bad_request("min_tokens must be an integer of at least 0",
                                         "min_tokens");
    }
    if (request.max_tokens && min->get<int64_t>() > *request.max_tokens) {
      return EngineApiError::bad_request("min_tokens must be less than or equal to max_tokens",
                                         "min_tokens");
    }
    if (min->get<int64_t>() > 0) request.min_tokens = static_cast<int32_t>(min->get<int64_t>());
  }
  return request;
}

}  // namespace gangway
