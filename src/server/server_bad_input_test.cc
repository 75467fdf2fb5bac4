// Bad input, each answered with the right status and an OpenAI-style error body, and the server
// still healthy afterwards: malformed JSON, wrong types, unknown model, empty prompt, max_tokens
// out of range, a body over the limit, an unsupported content type, an unknown endpoint, a wrong
// method, a header flood, malformed HTTP, and a client that sends half a request and stalls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/server_harness_for_tests.h"

namespace gangway {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::http_call;
using testing::post_json;
using testing::raw_exchange;

class BadInputTest : public testing::SharedServerTest {
 protected:
  // The reply is an OpenAI error object; then the server still answers.
  static void expect_error(const testing::HttpReply& reply, int status, const std::string& code,
                           const std::string& param = "") {
    EXPECT_EQ(reply.status, status) << reply.body;
    const json body = json::parse(reply.body, nullptr, false);
    ASSERT_TRUE(body.is_object()) << reply.body;
    ASSERT_TRUE(body["error"].is_object()) << reply.body;
    EXPECT_TRUE(body["error"]["message"].is_string());
    EXPECT_TRUE(body["error"]["type"].is_string());
    EXPECT_EQ(body["error"]["code"], code) << reply.body;
    if (!param.empty()) {
      EXPECT_EQ(body["error"]["param"], param) << reply.body;
    }
    expect_healthy();
  }
  // The same for a raw HTTP exchange (Content-Length body after the head).
  static void expect_raw_error(const std::string& answer, int status, const std::string& code) {
    testing::HttpReply reply;
    ASSERT_THAT(answer, ::testing::StartsWith("HTTP/1.1 ")) << answer;
    reply.status = std::stoi(answer.substr(9, 3));
    const size_t head_end = answer.find("\r\n\r\n");
    ASSERT_NE(head_end, std::string::npos) << answer;
    reply.body = answer.substr(head_end + 4);
    expect_error(reply, status, code);
  }
  static void expect_healthy() {
    EXPECT_EQ(http_call(port(), "GET", "/health").status, 200);
    const auto reply =
        post_json(port(), "/v1/completions", R"({"model":"small","prompt":"ok","max_tokens":1})");
    EXPECT_EQ(reply.status, 200) << reply.body;
  }
};

TEST_F(BadInputTest, MalformedJsonIs400) {
  expect_error(post_json(port(), "/v1/completions", R"({"model": "small", "prompt": )"), 400,
               "invalid_json");
  expect_error(post_json(port(), "/v1/completions", "[1,2,3]"), 400, "invalid_type");
}

TEST_F(BadInputTest, WrongTypesAre400NamingTheParameter) {
  expect_error(post_json(port(), "/v1/completions", R"({"model":7,"prompt":"x"})"), 400,
               "invalid_type", "model");
  expect_error(post_json(port(), "/v1/completions", R"({"model":"small","prompt":{"a":1}})"), 400,
               "invalid_type", "prompt");
  expect_error(
      post_json(port(), "/v1/completions", R"({"model":"small","prompt":"x","max_tokens":"9"})"),
      400, "invalid_type", "max_tokens");
  expect_error(
      post_json(port(), "/v1/completions", R"({"model":"small","prompt":"x","max_tokens":2.5})"),
      400, "invalid_type", "max_tokens");
  expect_error(post_json(port(), "/v1/completions", R"({"model":"small","prompt":"x","stream":1})"),
               400, "invalid_type", "stream");
  expect_error(post_json(port(), "/v1/chat/completions", R"({"model":"small","messages":"hi"})"),
               400, "invalid_type", "messages");
  expect_error(post_json(port(), "/v1/chat/completions",
                         R"({"model":"small","messages":[{"role":"user","content":5}]})"),
               400, "invalid_type", "messages[0].content");
}

TEST_F(BadInputTest, UnknownModelIs404) {
  expect_error(post_json(port(), "/v1/completions", R"({"model":"gpt-9","prompt":"x"})"), 404,
               "model_not_found", "model");
}

TEST_F(BadInputTest, MissingOrEmptyPromptIs400) {
  expect_error(post_json(port(), "/v1/completions", R"({"model":"small","prompt":""})"), 400,
               "invalid_value", "prompt");
  expect_error(post_json(port(), "/v1/completions", R"({"model":"small"})"), 400,
               "missing_required_parameter", "prompt");
  expect_error(post_json(port(), "/v1/chat/completions", R"({"model":"small","messages":[]})"), 400,
               "invalid_value", "messages");
  expect_error(post_json(port(), "/v1/chat/completions",
                         R"({"model":"small","messages":[{"role":"user","content":""}]})"),
               400, "invalid_value", "messages");
}

TEST_F(BadInputTest, MaxTokensOutOfRangeIs400) {
  expect_error(
      post_json(port(), "/v1/completions", R"({"model":"small","prompt":"x","max_tokens":0})"), 400,
      "invalid_value", "max_tokens");
  expect_error(
      post_json(port(), "/v1/completions", R"({"model":"small","prompt":"x","max_tokens":-3})"),
      400, "invalid_value", "max_tokens");
  // The test node's context is 4096 tokens.
  expect_error(
      post_json(port(), "/v1/completions", R"({"model":"small","prompt":"x","max_tokens":4096})"),
      400, "context_length_exceeded", "max_tokens");
  expect_error(post_json(port(), "/v1/completions",
                         R"({"model":"small","prompt":"x","max_tokens":5,"min_tokens":6})"),
               400, "invalid_value", "min_tokens");
}

TEST_F(BadInputTest, HugeMaxTokensArePrintedExactlyAsGiven) {
  const auto message_for = [&](const std::string& key, const std::string& value) {
    const auto reply = post_json(port(), "/v1/completions",
                                 R"({"model":"small","prompt":"x",")" + key + "\":" + value + "}");
    const json body = json::parse(reply.body, nullptr, false);
    EXPECT_EQ(reply.status, 400) << reply.body;
    return body.is_object() ? body["error"]["message"].get<std::string>() : reply.body;
  };
  // The prompt "x" is one token: the sum is one more, never a wrapped negative number.
  EXPECT_THAT(message_for("max_tokens", "9223372036854775807"),
              HasSubstr("you requested 9223372036854775808 tokens (1 in the prompt, "
                        "9223372036854775807 in the completion)"));
  EXPECT_THAT(message_for("max_tokens", "9223372036854775808"),
              HasSubstr("you requested 9223372036854775809 tokens (1 in the prompt, "
                        "9223372036854775808 in the completion)"));
  EXPECT_THAT(message_for("max_tokens", "18446744073709551615"),
              HasSubstr("(1 in the prompt, 18446744073709551615 in the completion)"));
  EXPECT_THAT(message_for("max_tokens", "-9223372036854775808"),
              HasSubstr("-9223372036854775808 is less than the minimum of 1"));
  EXPECT_THAT(message_for("min_tokens", "18446744073709551615"),
              HasSubstr("got 18446744073709551615."));
  expect_healthy();
}

TEST_F(BadInputTest, BodyOverTheLimitIs413) {
  // The test server allows 64 KiB.
  const std::string prompt(70 * 1024, 'a');
  expect_error(
      post_json(port(), "/v1/completions", R"({"model":"small","prompt":")" + prompt + R"("})"),
      413, "body_too_large");
}

TEST_F(BadInputTest, UnsupportedContentTypeIs415) {
  expect_error(http_call(port(), "POST", "/v1/completions", "model=small&prompt=x",
                         {{"Content-Type", "application/x-www-form-urlencoded"}}),
               415, "unsupported_media_type");
}

TEST_F(BadInputTest, OnlyJsonItselfIsJson) {
  const std::string body = R"({"model":"small","prompt":"x","max_tokens":1})";
  expect_error(
      http_call(port(), "POST", "/v1/completions", body, {{"Content-Type", "application/jsonx"}}),
      415, "unsupported_media_type");
  expect_error(http_call(port(), "POST", "/v1/completions", body,
                         {{"Content-Type", "application/json-seq"}}),
               415, "unsupported_media_type");
  // Parameters and case are fine.
  EXPECT_EQ(http_call(port(), "POST", "/v1/completions", body,
                      {{"Content-Type", "Application/JSON ; charset=utf-8"}})
                .status,
            200);
}

TEST_F(BadInputTest, EncodedBodiesAre415) {
  const std::string body = R"({"model":"small","prompt":"x","max_tokens":1})";
  for (const char* encoding : {"gzip", "deflate", "br", "identity, gzip"}) {
    SCOPED_TRACE(encoding);
    expect_error(http_call(port(), "POST", "/v1/completions", body,
                           {{"Content-Type", "application/json"}, {"Content-Encoding", encoding}}),
                 415, "unsupported_content_encoding");
  }
  EXPECT_EQ(http_call(port(), "POST", "/v1/completions", body,
                      {{"Content-Type", "application/json"}, {"Content-Encoding", "identity"}})
                .status,
            200);
}

TEST_F(BadInputTest, Http11WithoutHostIs400) {
  expect_raw_error(raw_exchange(port(), "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n"), 400,
                   "bad_http_request");
  expect_raw_error(
      raw_exchange(port(),
                   "GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n"),
      400, "bad_http_request");
  // HTTP/1.0 has no Host requirement.
  EXPECT_THAT(raw_exchange(port(), "GET /ready HTTP/1.0\r\n\r\n"),
              ::testing::StartsWith("HTTP/1.1 200"));
}

TEST_F(BadInputTest, UnknownEndpointIs404AndWrongMethodIs405) {
  expect_error(http_call(port(), "GET", "/v1/embeddings"), 404, "unknown_url");
  const auto reply = http_call(port(), "GET", "/v1/completions");
  expect_error(reply, 405, "method_not_allowed");
  EXPECT_EQ(reply.header("allow"), "POST");
  expect_error(http_call(port(), "DELETE", "/v1/models"), 405, "method_not_allowed");
}

TEST_F(BadInputTest, HeaderFloodIs431) {
  std::string request = "GET /health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 2000; ++i) request += "X-Flood-" + std::to_string(i) + ": yes\r\n";
  request += "\r\n";
  expect_raw_error(raw_exchange(port(), request), 431, "header_too_large");
}

TEST_F(BadInputTest, MalformedHttpIs400) {
  expect_raw_error(raw_exchange(port(), "GARBAGE\r\n\r\n"), 400, "bad_http_request");
}

TEST_F(BadInputTest, HalfARequestThenAStallTimesOutWithoutAScheduleSlot) {
  // Headers promise 100 bytes; 20 arrive; then nothing. The test server's read timeout is 0.5 s.
  const std::string half =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: 100\r\n\r\n{\"model\":\"small\",\"p";
  std::string answer;
  std::thread stalled([&] { answer = raw_exchange(port(), half, 5); });
  // While it stalls, the scheduler holds nothing for it.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const json load = json::parse(http_call(port(), "GET", "/load").body);
  EXPECT_EQ(load["live_requests"], 0);
  stalled.join();
  expect_raw_error(answer, 408, "request_timeout");
  const std::string metrics = http_call(port(), "GET", "/metrics").body;
  EXPECT_GE(testing::metric_value(metrics, "gangway_read_timeouts_total"), 1);
  // Nothing of it ever reached the scheduler.
  EXPECT_EQ(testing::metric_value(metrics, "gangway_live_requests"), 0);
}

TEST_F(BadInputTest, StreamOptionsWithoutStreamAndNAbove1Are400) {
  expect_error(
      post_json(port(), "/v1/completions",
                R"({"model":"small","prompt":"x","stream_options":{"include_usage":true}})"),
      400, "invalid_value", "stream_options");
  expect_error(post_json(port(), "/v1/completions", R"({"model":"small","prompt":"x","n":2})"), 400,
               "unsupported_value", "n");
}

}  // namespace
}  // namespace gangway
