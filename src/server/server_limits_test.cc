// The limits an operator sets in `server:` and what a client sees when it hits each: JSON
// nesting depth, the header timeout (shorter than the whole request's), the connection cap with
// its probe reserve, the per-client cap; and what must keep working: a client that half-closes
// after its request gets its answer, and a request that can never meet its TTFT target on this
// node is told so (not to retry) instead of being sent elsewhere forever.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/server_harness_for_tests.h"

namespace gangway {
namespace {

using nlohmann::json;
using testing::eventually;
using ::testing::HasSubstr;
using testing::http_call;
using testing::post_json;
using testing::raw_exchange;
using testing::RunningServer;
using ::testing::StartsWith;

// The test scenario with `extra` appended to its server: section and its read timeout (0.5 s)
// set to `read_timeout_s`.
std::string scenario_with(const std::string& extra, const std::string& read_timeout_s = "10") {
  std::string yaml = testing::kTestScenario;
  const std::string timeout = "read_timeout_s: 0.5";
  yaml.replace(yaml.find(timeout), timeout.size(), "read_timeout_s: " + read_timeout_s);
  return yaml + extra;
}

int status_of(const std::string& answer) {
  return answer.starts_with("HTTP/1.1 ") ? std::stoi(answer.substr(9, 3)) : 0;
}

json body_of(const std::string& answer) {
  const size_t head_end = answer.find("\r\n\r\n");
  if (head_end == std::string::npos) return json();
  return json::parse(answer.substr(head_end + 4), nullptr, false);
}

std::string completion_request(const std::string& body, const std::string& extra_headers = "") {
  return "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
         extra_headers + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST(ServerLimitsTest, JsonNestedTooDeeplyIsRefusedBeforeItIsParsed) {
  RunningServer server(scenario_with("  max_json_depth: 16\n", "0.5"));
  // 60,000 '[' (the test body limit is 64 KiB) would be 60,000 nested arrays.
  const auto deep = post_json(server.port(), "/v1/completions", std::string(60000, '['));
  EXPECT_EQ(deep.status, 400);
  EXPECT_EQ(json::parse(deep.body)["error"]["code"], "invalid_json");
  EXPECT_THAT(deep.body, HasSubstr("more than 16 levels deep"));
  const auto nested = [](int depth) {
    return R"({"model":"small","prompt":"x","max_tokens":1,"extra":)" + std::string(depth, '[') +
           std::string(depth, ']') + "}";
  };
  EXPECT_EQ(post_json(server.port(), "/v1/completions", nested(15)).status, 200);
  EXPECT_EQ(post_json(server.port(), "/v1/completions", nested(16)).status, 400);
  // Brackets inside strings do not count.
  EXPECT_EQ(
      post_json(server.port(), "/v1/completions",
                R"({"model":"small","max_tokens":1,"prompt":")" + std::string(100, '[') + R"("})")
          .status,
      200);
}

TEST(ServerLimitsTest, HeadersHaveLessTimeThanTheWholeRequest) {
  RunningServer server(scenario_with("  header_timeout_s: 0.2\n", "1.5"));
  // Headers that never finish: 408 after the header timeout.
  const std::string slow_headers = raw_exchange(server.port(), "GET /health HTTP/1.1\r\nHo", 5);
  EXPECT_EQ(status_of(slow_headers), 408) << slow_headers;
  EXPECT_THAT(body_of(slow_headers)["error"]["message"].get<std::string>(),
              HasSubstr("headers did not arrive within 0.2 s"));
  // Headers in time, the body slower than the header timeout but within the read timeout: fine.
  {
    boost::asio::io_context io;
    auto socket = testing::connect_to(io, server.port());
    const std::string body = R"({"model":"small","prompt":"x","max_tokens":1})";
    const std::string request = completion_request(body, "Connection: close\r\n");
    const size_t split = request.size() - 5;
    boost::asio::write(socket, boost::asio::buffer(request.substr(0, split)));
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    boost::asio::write(socket, boost::asio::buffer(request.substr(split)));
    std::string answer;
    char chunk[4096];
    boost::system::error_code error;
    while (size_t n = socket.read_some(boost::asio::buffer(chunk), error)) answer.append(chunk, n);
    EXPECT_EQ(status_of(answer), 200) << answer;
  }
  // The body never finishes: 408 after the read timeout, saying so.
  const std::string slow_body = raw_exchange(
      server.port(), completion_request(R"({"model":"small","prompt":"x"})").substr(0, 120), 5);
  EXPECT_EQ(status_of(slow_body), 408) << slow_body;
  EXPECT_THAT(body_of(slow_body)["error"]["message"].get<std::string>(),
              HasSubstr("did not arrive whole within 1.5 s"));
  // An idle connection is not a slow request: the header timeout starts at the first byte.
  {
    boost::asio::io_context io;
    auto socket = testing::connect_to(io, server.port());
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    boost::asio::write(
        socket, boost::asio::buffer(
                    std::string("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")));
    char chunk[4096];
    boost::system::error_code error;
    const size_t n = socket.read_some(boost::asio::buffer(chunk), error);
    EXPECT_THAT(std::string(chunk, n), StartsWith("HTTP/1.1 200"));
  }
}

// Sockets that send part of a request and then nothing, like a slowloris client.
std::vector<boost::asio::ip::tcp::socket> stalled_sockets(boost::asio::io_context& io,
                                                          uint16_t port, int count) {
  std::vector<boost::asio::ip::tcp::socket> sockets;
  for (int i = 0; i < count; ++i) {
    sockets.push_back(testing::connect_to(io, port));
    boost::asio::write(sockets.back(),
                       boost::asio::buffer(std::string("GET /health HTTP/1.1\r\n")));
  }
  return sockets;
}

TEST(ServerLimitsTest, ProbesStillAnswerWhenStalledSocketsFillTheConnectionCap) {
  RunningServer server(scenario_with(
      "  max_connections: 6\n  probe_reserve_connections: 3\n  header_timeout_s: 10\n"));
  boost::asio::io_context io;
  auto stalled = stalled_sockets(io, server.port(), 6);
  ASSERT_TRUE(eventually([&] { return server.server().served_connections() == 6; }));
  // The node is full, yet its probes answer (from the reserve, one request per connection).
  const auto health = http_call(server.port(), "GET", "/health");
  EXPECT_EQ(health.status, 200) << health.body;
  EXPECT_EQ(health.header("connection"), "close");
  EXPECT_EQ(http_call(server.port(), "GET", "/ready").status, 200);
  // Anything else is told to go elsewhere.
  const auto refused =
      post_json(server.port(), "/v1/completions", R"({"model":"small","prompt":"x"})");
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(json::parse(refused.body)["error"]["code"], "too_many_connections");
  EXPECT_EQ(refused.header("retry-after"), "1");
  // With the reserve full too, new connections are closed at once.
  auto reserve = stalled_sockets(io, server.port(), 3);
  ASSERT_TRUE(eventually([&] { return server.server().reserve_connections() == 3; }));
  const std::string closed =
      raw_exchange(server.port(), "GET /health HTTP/1.1\r\nHost: x\r\n\r\n", 5);
  EXPECT_EQ(closed, "");
  // Reserve connections get one short chance: a second later the slots are free again.
  EXPECT_TRUE(eventually([&] { return server.server().reserve_connections() == 0; }, 5));
  EXPECT_EQ(http_call(server.port(), "GET", "/health").status, 200);
  // When the stalled sockets go, requests are served again.
  stalled.clear();
  ASSERT_TRUE(eventually([&] { return server.server().served_connections() == 0; }));
  EXPECT_EQ(post_json(server.port(), "/v1/completions",
                      R"({"model":"small","prompt":"x","max_tokens":1})")
                .status,
            200);
}

TEST(ServerLimitsTest, OneAddressOverItsConnectionLimitIsTold429) {
  RunningServer server(scenario_with("  max_connections_per_client: 3\n  header_timeout_s: 10\n"));
  boost::asio::io_context io;
  auto stalled = stalled_sockets(io, server.port(), 3);
  ASSERT_TRUE(eventually([&] { return server.server().served_connections() == 3; }));
  const auto refused =
      post_json(server.port(), "/v1/completions", R"({"model":"small","prompt":"x"})");
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(json::parse(refused.body)["error"]["code"], "too_many_client_connections");
  EXPECT_EQ(http_call(server.port(), "GET", "/health").status, 200);
}

std::string exchange_with_half_close(uint16_t port, const std::string& request) {
  boost::asio::io_context io;
  auto socket = testing::connect_to(io, port);
  boost::asio::write(socket, boost::asio::buffer(request));
  socket.shutdown(boost::asio::ip::tcp::socket::shutdown_send);
  std::string answer;
  char chunk[4096];
  boost::system::error_code error;
  while (size_t n = socket.read_some(boost::asio::buffer(chunk), error)) answer.append(chunk, n);
  return answer;
}

TEST(ServerLimitsTest, AClientThatHalfClosesAfterItsRequestGetsItsAnswer) {
  RunningServer server;
  const std::string answer = exchange_with_half_close(
      server.port(), completion_request(R"({"model":"small","prompt":"x","max_tokens":5})"));
  EXPECT_EQ(status_of(answer), 200) << answer;
  EXPECT_EQ(body_of(answer)["usage"]["completion_tokens"], 5);
  const std::string streamed = exchange_with_half_close(
      server.port(),
      completion_request(R"({"model":"small","prompt":"x","max_tokens":5,"stream":true})"));
  EXPECT_EQ(status_of(streamed), 200) << streamed;
  EXPECT_THAT(streamed, HasSubstr("data: [DONE]"));
  EXPECT_THAT(exchange_with_half_close(server.port(), "GET /health HTTP/1.0\r\n\r\n"),
              StartsWith("HTTP/1.1 200"));
  // Nothing was cancelled.
  const std::string metrics = http_call(server.port(), "GET", "/metrics").body;
  EXPECT_EQ(testing::metric_value(metrics, "gangway_client_disconnects_total"), 0);
}

TEST(ServerLimitsTest, ARequestThatCanNeverMeetItsTargetIsToldNotToRetry) {
  // 100 ms per iteration, 2,048 prompt tokens per iteration: 5,600 prompt tokens take 300 ms of
  // prefill on an idle GPU, over the interactive class's 200 ms.
  std::string yaml = testing::kTestScenario;
  const std::string small_cost = "cost: {model: constant, iteration_ms: 2}";
  yaml.replace(yaml.find(small_cost), small_cost.size(),
               "max_batched_tokens: 2048\n    cost: {model: constant, iteration_ms: 100}");
  const std::string context = "max_context_tokens: 4096";
  yaml.replace(yaml.find(context), context.size(), "max_context_tokens: 8192");
  RunningServer server(yaml);
  const std::string prompt(5600 * 4, 'a');  // 4 bytes per token
  const auto never = post_json(server.port(), "/v1/completions",
                               R"({"model":"small","max_tokens":4,"slo_class":"interactive",)"
                               R"("prompt":")" +
                                   prompt + R"("})");
  EXPECT_EQ(never.status, 400) << never.body;
  EXPECT_EQ(json::parse(never.body)["error"]["code"], "deadline_never_meetable");
  EXPECT_EQ(never.header("retry-after"), "");
  // The same prompt in a class with a looser target is served.
  const auto standard = post_json(server.port(), "/v1/completions",
                                  R"({"model":"small","max_tokens":1,"slo_class":"standard",)"
                                  R"("prompt":")" +
                                      prompt + R"("})");
  EXPECT_EQ(standard.status, 200) << standard.body;
}

TEST(ServerFaultsTest, TheScenariosFaultsHitTheEmulatedGpus) {
  // GPU 0 is lost from 0.3 s to 1.3 s after the start: the large model, which needs every GPU,
  // is told to go elsewhere meanwhile, and serves again once the GPU is back.
  RunningServer server(std::string(testing::kTestScenario) +
                       "faults: [{kind: gpu_loss, gpu: 0, at_s: 0.3, duration_s: 1}]\n");
  const auto large = [&] {
    return post_json(server.port(), "/v1/completions",
                     R"({"model":"large","prompt":"x","max_tokens":1})");
  };
  EXPECT_TRUE(eventually(
      [&] {
        const auto reply = large();
        return reply.status == 503 && json::parse(reply.body)["error"]["code"] == "no_capacity";
      },
      5));
  EXPECT_TRUE(eventually([&] { return large().status == 200; }, 5));
}

}  // namespace
}  // namespace gangway
