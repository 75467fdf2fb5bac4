#include "server/openai_request.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/emulated_tokenizer.h"
#include "http/json_depth.h"
#include "server/client_text.h"

namespace gangway {
namespace {

using nlohmann::json;

const char* json_type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    default:
      return "an unknown value";
  }
}

ApiError wrong_type(const std::string& param, const char* expected, const json& got) {
  return ApiError::invalid("Invalid type for '" + param + "': expected " + expected + ", but got " +
                               json_type_name(got) + ".",
                           param, "invalid_type");
}

// A whole number above int64's range (JSON's unsigned numbers up to 2^64-1): not a type error,
// but too large for any limit, and shown exactly as given.
bool is_huge_whole_number(const json& value) {
  return value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
}

// prompt + completion tokens, exactly, for a message (the sum may not fit in int64).
std::string requested_total(int64_t prompt_tokens, const json& completion) {
  const uint64_t completion_tokens = completion.is_number_unsigned()
                                         ? completion.get<uint64_t>()
                                         : static_cast<uint64_t>(completion.get<int64_t>());
  const auto prompt = static_cast<uint64_t>(prompt_tokens);
  if (completion_tokens > UINT64_MAX - prompt) return "more than " + std::to_string(UINT64_MAX);
  return std::to_string(prompt + completion_tokens);
}

// A whole number in int64 range; fractional values are type errors like OpenAI's.
std::optional<int64_t> as_integer(const json& value) {
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    return v > static_cast<uint64_t>(INT64_MAX) ? std::optional<int64_t>()
                                                : static_cast<int64_t>(v);
  }
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15)
      return static_cast<int64_t>(v);
  }
  return std::nullopt;
}

// The prompt text of a completions request: a string or a one-element array of strings. An array
// of token ids (a pre-tokenized prompt) becomes 4 bytes of text per id, so its length in tokens
// is kept and equal id sequences still give equal blocks.
std::variant<std::string, ApiError> completion_prompt(const json& body) {
  const auto it = body.find("prompt");
  if (it == body.end() || it->is_null()) {
    return ApiError::invalid("Missing required parameter: 'prompt'.", "prompt",
                             "missing_required_parameter");
  }
  const json& prompt = *it;
  if (prompt.is_string()) return prompt.get<std::string>();
  if (prompt.is_array()) {
    if (prompt.empty()) return ApiError::invalid("'prompt' must not be empty.", "prompt");
    if (prompt[0].is_string()) {
      if (prompt.size() > 1) {
        return ApiError::invalid(
            "Only one prompt per request is supported; send several requests instead.", "prompt",
            "unsupported_value");
      }
      return prompt[0].get<std::string>();
    }
    std::string text;
    text.reserve(prompt.size() * kEmulatedBytesPerToken);
    for (const json& token : prompt) {
      const std::optional<int64_t> id = as_integer(token);
      if (!id || *id < 0 || *id > UINT32_MAX) {
        return wrong_type("prompt", "a string, an array of one string, or an array of token ids",
                          token);
      }
      const uint32_t v = static_cast<uint32_t>(*id);
      char bytes[4] = {static_cast<char>('a' + (v & 15)), static_cast<char>('a' + ((v >> 4) & 15)),
                       static_cast<char>('a' + ((v >> 8) & 15)),
                       static_cast<char>('a' + ((v >> 12) & 15) + ((v >> 16) ? 16 : 0))};
      text.append(bytes, 4);
    }
    return text;
  }
  return wrong_type("prompt", "a string or an array", prompt);
}

std::optional<ApiError> append_message_content(const json& content, size_t index,
                                               std::string& text) {
  const std::string param = "messages[" + std::to_string(index) + "].content";
  if (content.is_string()) {
    text.append(content.get_ref<const std::string&>());
    return std::nullopt;
  }
  if (content.is_null()) return std::nullopt;  // e.g. an assistant message with tool calls
  if (!content.is_array())
    return wrong_type(param, "a string or an array of content parts", content);
  for (const json& part : content) {
    if (!part.is_object()) return wrong_type(param, "an array of content part objects", part);
    const auto type = part.find("type");
    if (type == part.end() || !type->is_string()) {
      return ApiError::invalid("Each content part needs a 'type'.", param,
                               "missing_required_parameter");
    }
    if (*type != "text") {
      return ApiError::invalid("Only text content parts are supported, got '" +
                                   shown_client_text(type->get_ref<const std::string&>()) + "'.",
                               param, "unsupported_value");
    }
    const auto part_text = part.find("text");
    if (part_text == part.end() || !part_text->is_string()) {
      return ApiError::invalid("A text content part needs a string 'text'.", param, "invalid_type");
    }
    text.append(part_text->get_ref<const std::string&>());
  }
  return std::nullopt;
}

std::variant<std::string, ApiError> chat_prompt(const json& body) {
  const auto it = body.find("messages");
  if (it == body.end() || it->is_null()) {
    return ApiError::invalid("Missing required parameter: 'messages'.", "messages",
                             "missing_required_parameter");
  }
  if (!it->is_array()) return wrong_type("messages", "an array", *it);
  if (it->empty()) {
    return ApiError::invalid("'messages' must contain at least one message.", "messages");
  }
  std::string text;
  size_t content_bytes = 0;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& message = (*it)[i];
    const std::string param = "messages[" + std::to_string(i) + "]";
    if (!message.is_object()) return wrong_type(param, "an object", message);
    const auto role = message.find("role");
    if (role == message.end() || !role->is_string()) {
      return ApiError::invalid(
          "Each message needs a string 'role'.", param + ".role",
          role == message.end() ? "missing_required_parameter" : "invalid_type");
    }
    const std::string& role_name = role->get_ref<const std::string&>();
    if (role_name != "system" && role_name != "user" && role_name != "assistant" &&
        role_name != "tool" && role_name != "developer" && role_name != "function") {
      return ApiError::invalid("Invalid value for 'role': '" + shown_client_text(role_name) +
                                   "'; expected system, developer, user, assistant or tool.",
                               param + ".role");
    }
    text.append("<|").append(role_name).append("|>\n");
    const size_t before = text.size();
    if (const auto content = message.find("content"); content != message.end()) {
      if (auto error = append_message_content(*content, i, text)) return *error;
    }
    content_bytes += text.size() - before;
    text.push_back('\n');
  }
  if (content_bytes == 0) {
    return ApiError::invalid("The messages have no content: the prompt is empty.", "messages");
  }
  text.append("<|assistant|>\n");
  return text;
}

std::optional<bool> optional_bool(const json& body, const char* key,
                                  std::optional<ApiError>& error) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) {
    error = wrong_type(key, "a boolean", *it);
    return std::nullopt;
  }
  return it->get<bool>();
}

// A scheduling field from a header (wins) or the body; the header's text or the body's string.
std::variant<std::monostate, std::string, ApiError> scheduling_name(
    const json& body, const char* key, const std::optional<std::string>& header) {
  if (header) return *header;
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) return std::monostate{};
  if (!it->is_string()) return wrong_type(key, "a string", *it);
  return it->get<std::string>();
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

std::variant<GenerationRequest, ApiError> parse_generation_request(Endpoint endpoint,
                                                                   std::string_view body_text,
                                                                   const SchedulingHeaders& headers,
                                                                   const ApiContext& context) {
  const NodeSpec& node = *context.node;
  if (json_nests_deeper_than(body_text, context.max_json_depth)) {
    return ApiError::invalid("The JSON body of your request nests arrays and objects more than " +
                                 std::to_string(context.max_json_depth) + " levels deep.",
                             "", "invalid_json");
  }
  json body = json::parse(body_text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    return ApiError::invalid(
        "We could not parse the JSON body of your request: it is not valid JSON.", "",
        "invalid_json");
  }
  if (!body.is_object()) {
    return ApiError::invalid(
        std::string("The request body must be a JSON object, got ") + json_type_name(body) + ".",
        "", "invalid_type");
  }
  GenerationRequest request;
  request.endpoint = endpoint;

  // model
  const auto model = body.find("model");
  if (model == body.end() || model->is_null()) {
    return ApiError::invalid("Missing required parameter: 'model'.", "model",
                             "missing_required_parameter");
  }
  if (!model->is_string()) return wrong_type("model", "a string", *model);
  const std::optional<ModelId> model_id = node.find_model(model->get_ref<const std::string&>());
  if (!model_id) {
    ApiError error;
    error.status = 404;
    error.code = "model_not_found";
    error.param = "model";
    error.message = "The model '" + shown_client_text(model->get_ref<const std::string&>()) +
                    "' does not exist on this node. Models: " + join(node.model_names()) + ".";
    return error;
  }
  request.model = *model_id;
  const ModelSpec& spec = node.model(request.model);

  // prompt
  std::variant<std::string, ApiError> prompt =
      endpoint == Endpoint::kCompletions ? completion_prompt(body) : chat_prompt(body);
  if (auto* error = std::get_if<ApiError>(&prompt)) return *error;
  const std::string& text = std::get<std::string>(prompt);
  if (text.empty()) return ApiError::invalid("'prompt' must not be empty.", "prompt");
  const int64_t prompt_tokens = count_emulated_tokens(text);
  if (prompt_tokens >= spec.max_context_tokens) {
    ApiError error = ApiError::invalid(
        "This model's maximum context length is " + std::to_string(spec.max_context_tokens) +
            " tokens, but the prompt has " + std::to_string(prompt_tokens) +
            " tokens, which leaves no room for an answer.",
        endpoint == Endpoint::kCompletions ? "prompt" : "messages", "context_length_exceeded");
    return error;
  }
  request.prompt_tokens = static_cast<int32_t>(prompt_tokens);
  append_emulated_block_hashes(text, node.kv_block_tokens, request.prefix_blocks);

  // max_tokens (chat: max_completion_tokens is the newer name; either may be given)
  const int64_t room = spec.max_context_tokens - prompt_tokens;
  const char* max_key = "max_tokens";
  auto max_it = body.find("max_tokens");
  if (endpoint == Endpoint::kChatCompletions) {
    const auto newer = body.find("max_completion_tokens");
    if (newer != body.end() && !newer->is_null()) {
      max_it = newer;
      max_key = "max_completion_tokens";
    }
  }
  if (max_it != body.end() && !max_it->is_null()) {
    if (is_huge_whole_number(*max_it)) {
      return ApiError::invalid(
          "This model's maximum context length is " + std::to_string(spec.max_context_tokens) +
              " tokens. However, you requested " + requested_total(prompt_tokens, *max_it) +
              " tokens (" + std::to_string(prompt_tokens) + " in the prompt, " +
              std::to_string(max_it->get<uint64_t>()) + " in the completion). Reduce '" + max_key +
              "'.",
          max_key, "context_length_exceeded");
    }
    const std::optional<int64_t> max_tokens = as_integer(*max_it);
    if (!max_tokens) return wrong_type(max_key, "an integer", *max_it);
    if (*max_tokens < 1) {
      return ApiError::invalid(std::string("Invalid '") + max_key + "': " +
                                   std::to_string(*max_tokens) + " is less than the minimum of 1.",
                               max_key);
    }
    if (*max_tokens > room) {
      return ApiError::invalid(
          "This model's maximum context length is " + std::to_string(spec.max_context_tokens) +
              " tokens. However, you requested " + requested_total(prompt_tokens, *max_it) +
              " tokens (" + std::to_string(prompt_tokens) + " in the prompt, " +
              std::to_string(*max_tokens) + " in the completion). Reduce '" + max_key + "'.",
          max_key, "context_length_exceeded");
    }
    request.max_tokens = static_cast<int32_t>(*max_tokens);
    request.max_tokens_given = true;
  } else {
    request.max_tokens = static_cast<int32_t>(room);
  }

  // streaming
  std::optional<ApiError> error;
  request.stream = optional_bool(body, "stream", error).value_or(false);
  if (error) return *error;
  if (const auto options = body.find("stream_options");
      options != body.end() && !options->is_null()) {
    if (!options->is_object()) return wrong_type("stream_options", "an object", *options);
    if (!request.stream) {
      return ApiError::invalid("'stream_options' is only allowed when 'stream' is true.",
                               "stream_options");
    }
    request.include_usage = optional_bool(*options, "include_usage", error).value_or(false);
    if (error) {
      error->param = "stream_options.include_usage";
      return *error;
    }
  }
  if (const auto n = body.find("n"); n != body.end() && !n->is_null()) {
    const std::optional<int64_t> value = as_integer(*n);
    if (!value && !is_huge_whole_number(*n)) return wrong_type("n", "an integer", *n);
    if (value != 1) {
      return ApiError::invalid("Only n = 1 is supported.", "n", "unsupported_value");
    }
  }

  // Length control (vLLM's extensions, used by benchmarks).
  request.ignore_eos = optional_bool(body, "ignore_eos", error).value_or(false);
  if (error) return *error;
  if (const auto min = body.find("min_tokens"); min != body.end() && !min->is_null()) {
    const std::optional<int64_t> value = as_integer(*min);
    if (!value && !is_huge_whole_number(*min)) return wrong_type("min_tokens", "an integer", *min);
    if (!value || *value < 0 || *value > request.max_tokens) {
      return ApiError::invalid("Invalid 'min_tokens': expected 0 to max_tokens (" +
                                   std::to_string(request.max_tokens) + "), got " + min->dump() +
                                   ".",
                               "min_tokens");
    }
    if (*value > 0) request.min_tokens = static_cast<int32_t>(*value);
  }

  // Scheduling: SLO class, tenant, deadline.
  request.slo_class = context.default_slo_class;
  auto slo = scheduling_name(body, "slo_class", headers.slo_class);
  if (auto* e = std::get_if<ApiError>(&slo)) return *e;
  if (auto* name = std::get_if<std::string>(&slo)) {
    const std::optional<SloClassId> id = node.find_slo_class(*name);
    if (!id) {
      return ApiError::invalid("Unknown SLO class '" + shown_client_text(*name) +
                                   "'; expected one of: " + join(node.slo_class_names()) + ".",
                               "slo_class");
    }
    request.slo_class = *id;
  }
  auto tenant = scheduling_name(body, "tenant", headers.tenant);
  if (auto* e = std::get_if<ApiError>(&tenant)) return *e;
  if (auto* name = std::get_if<std::string>(&tenant)) {
    bool found = false;
    for (size_t i = 0; i < context.tenants.size() && !found; ++i) {
      if (context.tenants[i] == *name) {
        request.tenant = TenantId(static_cast<uint16_t>(i));
        found = true;
      }
    }
    if (!found) {
      return ApiError::invalid("Unknown tenant '" + shown_client_text(*name) +
                                   "'; expected one of: " + join(context.tenants) + ".",
                               "tenant");
    }
  }
  std::optional<double> deadline_ms;
  if (headers.ttft_deadline) {
    const std::string& value = *headers.ttft_deadline;
    double parsed = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (ec != std::errc() || end != value.data() + value.size()) {
      return ApiError::invalid(
          "Invalid X-Gangway-Ttft-Deadline-Ms header: expected a number of "
          "milliseconds, got '" +
              shown_client_text(value) + "'.",
          "ttft_deadline_ms");
    }
    deadline_ms = parsed;
  } else if (const auto it = body.find("ttft_deadline_ms"); it != body.end() && !it->is_null()) {
    if (!it->is_number()) return wrong_type("ttft_deadline_ms", "a number", *it);
    deadline_ms = it->get<double>();
  }
  if (deadline_ms) {
    if (!(*deadline_ms > 0) || !std::isfinite(*deadline_ms)) {
      return ApiError::invalid("Invalid 'ttft_deadline_ms': expected milliseconds > 0.",
                               "ttft_deadline_ms");
    }
    request.ttft_deadline = ms_to_duration(*deadline_ms);
  }
  return request;
}

}  // namespace gangway
