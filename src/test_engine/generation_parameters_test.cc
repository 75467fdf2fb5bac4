#include "test_engine/generation_parameters.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_engine/answer_renderer.h"

namespace gangway {
namespace {

GenerationParameters parsed_ok(ApiEndpoint endpoint, std::string_view body) {
  auto result = parse_generation_parameters(endpoint, body, "llama-3-8b");
  if (const auto* error = std::get_if<EngineApiError>(&result)) {
    ADD_FAILURE() << error->message;
    return {};
  }
  return std::get<GenerationParameters>(result);
}

EngineApiError parsed_error(ApiEndpoint endpoint, std::string_view body) {
  auto result = parse_generation_parameters(endpoint, body, "llama-3-8b");
  if (!std::holds_alternative<EngineApiError>(result)) {
    ADD_FAILURE() << "expected an error for " << body;
    return {};
  }
  return std::get<EngineApiError>(result);
}

TEST(GenerationParameters, CountsPromptTokensAndReadsTheOptions) {
  const auto completion =
      parsed_ok(ApiEndpoint::kCompletions,
                R"({"model":"llama-3-8b","prompt":"12345678x","max_tokens":7,"stream":true,)"
                R"("stream_options":{"include_usage":true},"temperature":0.3})");
  EXPECT_EQ(completion.prompt_tokens, 3);
  EXPECT_EQ(completion.max_tokens, 7);
  EXPECT_TRUE(completion.stream);
  EXPECT_TRUE(completion.include_usage);
  EXPECT_FALSE(completion.ignore_eos.has_value());
  EXPECT_EQ(parsed_ok(ApiEndpoint::kCompletions, R"({"prompt":[1,2,3,4,5]})").prompt_tokens, 5);
  EXPECT_EQ(parsed_ok(ApiEndpoint::kCompletions, R"({"prompt":"hi"})").max_tokens, 16)
      << "vLLM's completions default";
  const auto chat = parsed_ok(
      ApiEndpoint::kChatCompletions,
      R"({"messages":[{"role":"user","content":"12345678"},)"
      R"({"role":"user","content":[{"type":"text","text":"1234"}]}],"ignore_eos":false})");
  EXPECT_EQ(chat.prompt_tokens, 2 + 1 + 2 * 4);
  EXPECT_FALSE(chat.max_tokens.has_value()) << "a chat without max_tokens leaves it to the model";
  EXPECT_EQ(chat.ignore_eos, false);
  EXPECT_EQ(parsed_ok(ApiEndpoint::kCompletions, R"({"prompt":"x","max_tokens":9,"min_tokens":4})")
                .min_tokens,
            4);
  EXPECT_EQ(parsed_ok(ApiEndpoint::kChatCompletions,
                      R"({"messages":[{"role":"user","content":"x"}],"max_completion_tokens":9})")
                .max_tokens,
            9);
}

TEST(GenerationParameters, AnswersBadBodiesAsVllmDoes) {
  EXPECT_EQ(parsed_error(ApiEndpoint::kCompletions, "{not json").status, 400);
  EXPECT_EQ(parsed_error(ApiEndpoint::kCompletions, "[1]").status, 400);
  EXPECT_EQ(parsed_error(ApiEndpoint::kCompletions, R"({"max_tokens":3})").param, "prompt");
  EXPECT_EQ(parsed_error(ApiEndpoint::kCompletions, R"({"prompt":"x","max_tokens":0})").param,
            "max_tokens");
  EXPECT_EQ(parsed_error(ApiEndpoint::kCompletions, R"({"prompt":"x","n":2})").param, "n");
  EXPECT_EQ(
      parsed_error(ApiEndpoint::kCompletions, R"({"prompt":"x","max_tokens":2,"min_tokens":3})")
          .param,
      "min_tokens");
  EXPECT_EQ(parsed_error(ApiEndpoint::kCompletions,
                         R"({"prompt":"x","stream_options":{"include_usage":true}})")
                .param,
            "stream_options");
  EXPECT_EQ(parsed_error(ApiEndpoint::kChatCompletions, R"({"messages":[]})").status, 400);
  const EngineApiError other =
      parsed_error(ApiEndpoint::kCompletions, R"({"model":"other","prompt":"x"})");
  EXPECT_EQ(other.status, 404);
  EXPECT_EQ(other.type, "NotFoundError");
  EXPECT_EQ(other.message, "The model `other` does not exist.");
  const std::string deep = std::string(10000, '[') + std::string(10000, ']');
  EXPECT_EQ(parsed_error(ApiEndpoint::kCompletions, deep).status, 400);
}

TEST(EngineApiError, HasVllmsShape) {
  const auto body = nlohmann::json::parse(
      engine_error_body(EngineApiError::not_found("The model `x` does not exist.")));
  EXPECT_EQ(body["error"]["type"], "NotFoundError");
  EXPECT_EQ(body["error"]["code"], 404);
  EXPECT_TRUE(body["error"]["param"].is_null());
  EXPECT_EQ(body["error"]["message"], "The model `x` does not exist.");
}

TEST(AnswerRenderer, StreamsChatChunksAsVllmDoes) {
  const AnswerRenderer renderer(ApiEndpoint::kChatCompletions, "chatcmpl-1", 5, "m");
  std::string out;
  renderer.append_token_events(out, 0, nullptr);
  renderer.append_token_events(out, 1, "length");
  renderer.append_usage_event(out, 3, 2);
  AnswerRenderer::append_done(out);
  std::vector<nlohmann::json> chunks;
  size_t start = 0;
  while (start < out.size()) {
    const size_t end = out.find("\n\n", start);
    ASSERT_NE(end, std::string::npos);
    const std::string event = out.substr(start, end - start);
    ASSERT_EQ(event.rfind("data: ", 0), 0u);
    if (event != "data: [DONE]") chunks.push_back(nlohmann::json::parse(event.substr(6)));
    start = end + 2;
  }
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(chunks[0]["object"], "chat.completion.chunk");
  EXPECT_EQ(chunks[0]["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(chunks[1]["choices"][0]["delta"]["content"], std::string(token_text(0)));
  EXPECT_TRUE(chunks[1]["choices"][0]["finish_reason"].is_null());
  EXPECT_EQ(chunks[2]["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(chunks[3]["choices"].empty());
  EXPECT_EQ(chunks[3]["usage"]["completion_tokens"], 2);
  EXPECT_EQ(chunks[3]["usage"]["total_tokens"], 5);
  EXPECT_NE(out.find("data: [DONE]\n\n"), std::string::npos);
}

TEST(AnswerRenderer, WholeAnswersCarryTextAndUsage) {
  const AnswerRenderer completion(ApiEndpoint::kCompletions, "cmpl-1", 5, "m");
  const auto body = nlohmann::json::parse(completion.full_answer(3, "stop", 4));
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["choices"][0]["text"].get<std::string>().size(), 12u);
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(body["usage"]["prompt_tokens"], 4);
  const AnswerRenderer chat(ApiEndpoint::kChatCompletions, "chatcmpl-1", 5, "m");
  const auto chat_body = nlohmann::json::parse(chat.full_answer(2, "abort", 4));
  EXPECT_EQ(chat_body["object"], "chat.completion");
  EXPECT_EQ(chat_body["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(chat_body["choices"][0]["finish_reason"], "abort");
}

}  // namespace
}  // namespace gangway
