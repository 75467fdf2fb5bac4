// The OpenAI-compatible API end to end: a real server on a loopback port, real HTTP requests.
// Completions and chat, streaming and not, usage counts, the other endpoints, and the answers
// to scheduler outcomes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/server_harness_for_tests.h"

namespace gangway {
namespace {

using ::testing::HasSubstr;
using testing::http_call;
using testing::post_json;
using testing::RunningServer;
using ::testing::StartsWith;

using nlohmann::json;

// The "data: " payloads of an SSE body, in order.
std::vector<std::string> sse_events(const std::string& body) {
  std::vector<std::string> events;
  size_t start = 0;
  for (;;) {
    const size_t end = body.find("\n\n", start);
    if (end == std::string::npos) break;
    std::string event = body.substr(start, end - start);
    EXPECT_THAT(event, StartsWith("data: "));
    events.push_back(event.substr(6));
    start = end + 2;
  }
  EXPECT_EQ(start, body.size()) << "trailing bytes after the last event";
  return events;
}

class ServerApiTest : public testing::SharedServerTest {};

TEST_F(ServerApiTest, CompletionWithoutStreaming) {
  // 40 bytes of prompt = 10 tokens of the emulated tokenizer.
  const auto reply =
      post_json(port(), "/v1/completions",
                R"({"model":"small","prompt":"0123456789012345678901234567890123456789",)"
                R"("max_tokens":5,"ignore_eos":true})");
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_THAT(reply.header("content-type"), StartsWith("application/json"));
  const json body = json::parse(reply.body);
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["model"], "small");
  EXPECT_THAT(body["id"].get<std::string>(), StartsWith("cmpl-"));
  ASSERT_EQ(body["choices"].size(), 1u);
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["choices"][0]["text"].get<std::string>().size(), 5u * 4);
  EXPECT_EQ(body["usage"]["prompt_tokens"], 10);
  EXPECT_EQ(body["usage"]["completion_tokens"], 5);
  EXPECT_EQ(body["usage"]["total_tokens"], 15);
  EXPECT_TRUE(body["gangway"]["engine_ttft_ms"].is_number());
}

TEST_F(ServerApiTest, MinTokensStopsTheEmulatedModelThere) {
  const auto reply = post_json(port(), "/v1/completions",
                               R"({"model":"small","prompt":"hello","max_tokens":50,)"
                               R"("min_tokens":7})");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json body = json::parse(reply.body);
  EXPECT_EQ(body["usage"]["completion_tokens"], 7);
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
}

TEST_F(ServerApiTest, StreamingCompletionSendsOneEventPerTokenThenDone) {
  const auto reply = post_json(port(), "/v1/completions",
                               R"({"model":"small","prompt":"hello world","max_tokens":6,)"
                               R"("ignore_eos":true,"stream":true})");
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_THAT(reply.header("content-type"), StartsWith("text/event-stream"));
  EXPECT_EQ(reply.header("transfer-encoding"), "chunked");
  const auto events = sse_events(reply.body);
  ASSERT_EQ(events.size(), 6u + 2);  // tokens, the finish chunk, [DONE]
  for (size_t i = 0; i < 6; ++i) {
    const json chunk = json::parse(events[i]);
    EXPECT_EQ(chunk["object"], "text_completion");
    EXPECT_TRUE(chunk["choices"][0]["finish_reason"].is_null());
    EXPECT_EQ(chunk["choices"][0]["text"].get<std::string>().size(), 4u);
  }
  const json finish = json::parse(events[6]);
  EXPECT_EQ(finish["choices"][0]["finish_reason"], "length");
  EXPECT_FALSE(finish.contains("usage"));
  EXPECT_EQ(events[7], "[DONE]");
}

TEST_F(ServerApiTest, StreamingChatWithUsage) {
  const auto reply =
      post_json(port(), "/v1/chat/completions",
                R"({"model":"small","messages":[{"role":"system","content":"be brief"},)"
                R"({"role":"user","content":"hi"}],"max_tokens":3,"ignore_eos":true,"stream":true,)"
                R"("stream_options":{"include_usage":true}})");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const auto events = sse_events(reply.body);
  // role chunk, 3 tokens, finish chunk, usage chunk, [DONE]
  ASSERT_EQ(events.size(), 7u);
  const json role = json::parse(events[0]);
  EXPECT_EQ(role["object"], "chat.completion.chunk");
  EXPECT_EQ(role["choices"][0]["delta"]["role"], "assistant");
  std::string content;
  for (size_t i = 1; i <= 3; ++i) {
    content += json::parse(events[i])["choices"][0]["delta"]["content"].get<std::string>();
  }
  EXPECT_EQ(content.size(), 12u);
  EXPECT_EQ(json::parse(events[4])["choices"][0]["finish_reason"], "length");
  const json usage = json::parse(events[5]);
  EXPECT_TRUE(usage["choices"].empty());
  // "<|system|>\nbe brief\n<|user|>\nhi\n<|assistant|>\n" is 46 bytes: 12 tokens.
  EXPECT_EQ(usage["usage"]["prompt_tokens"], 12);
  EXPECT_EQ(usage["usage"]["completion_tokens"], 3);
  EXPECT_EQ(usage["usage"]["total_tokens"], 15);
  EXPECT_EQ(events[6], "[DONE]");
}

TEST_F(ServerApiTest, ChatWithoutStreaming) {
  const auto reply = post_json(port(), "/v1/chat/completions",
                               R"({"model":"large","messages":[{"role":"user","content":)"
                               R"([{"type":"text","text":"hello"}]}],"max_completion_tokens":4,)"
                               R"("ignore_eos":true})");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json body = json::parse(reply.body);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(body["choices"][0]["message"]["content"].get<std::string>().size(), 16u);
  EXPECT_EQ(body["usage"]["completion_tokens"], 4);
}

TEST_F(ServerApiTest, SchedulingFieldsFromBodyAndHeaders) {
  auto reply = post_json(port(), "/v1/completions",
                         R"({"model":"small","prompt":"x","max_tokens":1,"slo_class":"batch",)"
                         R"("tenant":"acme","ttft_deadline_ms":5000})");
  EXPECT_EQ(reply.status, 200) << reply.body;
  reply = http_call(port(), "POST", "/v1/completions",
                    R"({"model":"small","prompt":"x","max_tokens":1})",
                    {{"Content-Type", "application/json"},
                     {"X-Gangway-Slo-Class", "standard"},
                     {"X-Gangway-Tenant", "acme"}});
  EXPECT_EQ(reply.status, 200) << reply.body;
  reply = http_call(port(), "POST", "/v1/completions",
                    R"({"model":"small","prompt":"x","max_tokens":1})",
                    {{"Content-Type", "application/json"}, {"X-Gangway-Slo-Class", "gold"}});
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(json::parse(reply.body)["error"]["param"], "slo_class");
}

TEST_F(ServerApiTest, ModelsHealthReadyLoadAndMetrics) {
  auto reply = http_call(port(), "GET", "/v1/models");
  ASSERT_EQ(reply.status, 200);
  const json models = json::parse(reply.body);
  EXPECT_EQ(models["object"], "list");
  ASSERT_EQ(models["data"].size(), 2u);
  EXPECT_EQ(models["data"][0]["id"], "small");
  EXPECT_EQ(http_call(port(), "GET", "/v1/models/large").status, 200);
  EXPECT_EQ(http_call(port(), "GET", "/v1/models/nope").status, 404);

  reply = http_call(port(), "GET", "/health");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(json::parse(reply.body)["status"], "ok");
  reply = http_call(port(), "GET", "/ready");
  EXPECT_EQ(reply.status, 200);

  reply = http_call(port(), "GET", "/load");
  ASSERT_EQ(reply.status, 200);
  const json load = json::parse(reply.body);
  EXPECT_TRUE(load["models"].contains("small"));
  EXPECT_EQ(load["draining"], false);

  ASSERT_EQ(post_json(port(), "/v1/completions",
                      R"({"model":"small","prompt":"abcdefgh","max_tokens":2,"ignore_eos":true})")
                .status,
            200);
  reply = http_call(port(), "GET", "/metrics");
  ASSERT_EQ(reply.status, 200);
  EXPECT_THAT(reply.header("content-type"), StartsWith("text/plain"));
  for (const char* name :
       {"vllm:num_requests_running{model_name=\"small\"}",
        "vllm:num_requests_waiting{model_name=\"small\"}",
        "vllm:gpu_cache_usage_perc{model_name=\"small\"}",
        "vllm:kv_cache_usage_perc{model_name=\"small\"}", "vllm:prompt_tokens_total{",
        "vllm:generation_tokens_total{", "vllm:time_to_first_token_seconds_bucket{",
        "vllm:time_per_output_token_seconds_bucket{", "vllm:e2e_request_latency_seconds_count{",
        "gangway_requests_finished_total{", "gangway_time_to_first_token_seconds_bucket{",
        "gangway_http_responses_total{code=\"200\"}"}) {
    EXPECT_THAT(reply.body, HasSubstr(name));
  }
  EXPECT_GE(testing::metric_value(reply.body, "vllm:generation_tokens_total{model_name=\"small\"}"),
            2);
}

TEST_F(ServerApiTest, RejectionsCarryRetryAfterAndARouterReadableCode) {
  // The scheduler's own rejections reach the client through error_for_reason (below, every
  // overload reason: 503 or 429 with Retry-After and the reason as the code); a rate limit
  // (ServerOverloadTest) and draining (ServerLifecycleTest) are exercised end to end. A normal
  // request is still answered.
  const auto reply =
      post_json(port(), "/v1/completions", R"({"model":"small","prompt":"hi","max_tokens":10})");
  EXPECT_EQ(reply.status, 200);
  for (const Reason reason : {Reason::kQueueFull, Reason::kDeadlineUnmeetable, Reason::kShed,
                              Reason::kNoCapacity, Reason::kDraining}) {
    const ApiError error = error_for_reason(reason, 3);
    EXPECT_EQ(error.status, 503) << to_string(reason);
    EXPECT_EQ(error.retry_after_s, 3);
    EXPECT_EQ(error.code, to_string(reason));
  }
  EXPECT_EQ(error_for_reason(Reason::kRateLimited, 1).status, 429);
  EXPECT_EQ(error_for_reason(Reason::kBadRequest, 1).status, 400);
  EXPECT_FALSE(error_for_reason(Reason::kBadRequest, 1).retry_after_s);
}

// A rate limit configured for one tenant: the core rejects its second request at once, and the
// client sees 429 with Retry-After and an OpenAI-style error whose code names the reason; the
// other tenant and the server are unaffected.
TEST(ServerOverloadTest, RateLimitedRequestGets429WithRetryAfterAndTheReasonCode) {
  const std::string yaml = std::string(testing::kTestScenario) + R"(admission:
  rate_limits:
    - {tenant: acme, requests_per_s: 0.01, burst_s: 100}
)";
  RunningServer server(yaml);
  const std::string body = R"({"model":"small","prompt":"hi","max_tokens":4,"tenant":"acme"})";
  const auto first = post_json(server.port(), "/v1/completions", body);
  EXPECT_EQ(first.status, 200) << first.body;
  const auto second = post_json(server.port(), "/v1/completions", body);
  ASSERT_EQ(second.status, 429) << second.body;
  EXPECT_FALSE(second.header("retry-after").empty());
  EXPECT_GE(std::stoi(second.header("retry-after")), 1);
  const json error = json::parse(second.body)["error"];
  EXPECT_EQ(error["code"], "rate_limited");
  EXPECT_TRUE(error.contains("type"));
  EXPECT_TRUE(error.contains("message"));
  const auto other = post_json(server.port(), "/v1/completions",
                               R"({"model":"small","prompt":"hi","max_tokens":4})");
  EXPECT_EQ(other.status, 200) << other.body;
  EXPECT_EQ(http_call(server.port(), "GET", "/health").status, 200);
}

TEST_F(ServerApiTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  const std::string body = R"({"model":"small","prompt":"abcd","max_tokens":2,"n":1})";
  const std::string request =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  const std::string close_request = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  const std::string answer = testing::raw_exchange(port(), request + request + close_request);
  size_t count = 0;
  for (size_t at = answer.find("HTTP/1.1 200"); at != std::string::npos;
       at = answer.find("HTTP/1.1 200", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 3u) << answer;
}

}  // namespace
}  // namespace gangway
