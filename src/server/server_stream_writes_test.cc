// How a streamed answer's tokens leave: a client behind on reading gets the tokens produced
// meanwhile coalesced into fewer writes, every one of them still its own SSE event and HTTP
// chunk, in order, with the finish, usage and [DONE] events after them; the first token is never
// held back for coalescing; a client that goes away while its output waits cancels its request
// exactly once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <nlohmann/json.hpp>

#include "engine/emulated_tokenizer.h"
#include "server/server_harness_for_tests.h"

namespace gangway::stream_writes_test {
namespace {

using nlohmann::json;
using testing::eventually;
using testing::expect_one_client_disconnect;
using testing::http_call;
using testing::metric_value;
using testing::post_json;
using testing::RunningServer;

// The test scenario with room for a reader far behind: a large unsent-output limit and a long
// write stall limit, so that nothing here is cut off (server_lifecycle_test covers that), and
// the smallest socket send buffer.
std::string patient_scenario(std::string_view extra_server_keys = "") {
  std::string yaml = testing::kTestScenario;
  const auto replace = [&](std::string_view from, std::string_view to) {
    const size_t at = yaml.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    yaml.replace(at, from.size(), to);
  };
  replace("max_output_buffer_kib: 16", "max_output_buffer_kib: 4096");
  replace("write_stall_timeout_s: 1", "write_stall_timeout_s: 60");
  // The smallest socket buffer: the kernel stops taking writes after a few dozen tokens.
  replace("socket_send_buffer_kib: 16", "socket_send_buffer_kib: 4");
  yaml += "  ";
  yaml += extra_server_keys;
  yaml += "\n";
  return yaml;
}

std::string long_streaming_request(int max_tokens) {
  const std::string body = R"({"model":"small","prompt":"tell me a long story","max_tokens":)" +
                           std::to_string(max_tokens) +
                           R"(,"ignore_eos":true,"stream":true,)"
                           R"("stream_options":{"include_usage":true}})";
  return "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

int64_t requests_live(uint16_t port) {
  return json::parse(http_call(port, "GET", "/load").body)["live_requests"].get<int64_t>();
}

double metric(uint16_t port, const std::string& sample) {
  return metric_value(http_call(port, "GET", "/metrics").body, sample);
}

// A client socket whose receive buffer is as small as the kernel allows, so that the server's
// writes stop being taken at once soon after the client stops reading.
boost::asio::ip::tcp::socket small_window_socket(boost::asio::io_context& io, uint16_t port) {
  boost::asio::ip::tcp::socket socket(io);
  socket.open(boost::asio::ip::tcp::v4());
  socket.set_option(boost::asio::socket_base::receive_buffer_size(2048));
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  testing::set_receive_timeout(socket, 10);
  return socket;
}

// Reads until `done(received)` holds or the connection ends.
template <typename Done>
std::string read_until(boost::asio::ip::tcp::socket& socket, Done&& done) {
  std::string received;
  char chunk[16384];
  while (!done(received)) {
    boost::system::error_code error;
    const size_t n = socket.read_some(boost::asio::buffer(chunk), error);
    if (error || n == 0) break;
    received.append(chunk, n);
  }
  return received;
}

// The HTTP chunks of a chunked body (after the header block), up to the last (empty) chunk;
// fails the test on a malformed chunk.
std::vector<std::string> http_chunks(std::string_view body, bool& ended) {
  std::vector<std::string> chunks;
  ended = false;
  size_t at = 0;
  while (at < body.size()) {
    const size_t line_end = body.find("\r\n", at);
    if (line_end == std::string_view::npos) break;
    const size_t size = std::stoul(std::string(body.substr(at, line_end - at)), nullptr, 16);
    if (size == 0) {
      ended = body.substr(line_end) == "\r\n\r\n";
      EXPECT_TRUE(ended) << "bytes after the last chunk";
      break;
    }
    const size_t data = line_end + 2;
    EXPECT_LE(data + size + 2, body.size()) << "a chunk cut short";
    if (data + size + 2 > body.size()) break;
    chunks.emplace_back(body.substr(data, size));
    EXPECT_EQ(body.substr(data + size, 2), "\r\n");
    at = data + size + 2;
  }
  return chunks;
}

TEST(ServerStreamWritesTest, AReaderBehindGetsEveryTokenInOrderInFewerWrites) {
  RunningServer server(patient_scenario());
  const uint16_t port = server.port();
  // ~300 KB of events: the sockets' buffers hold a few hundred of them at most.
  constexpr int kTokens = 2000;
  boost::asio::io_context io;
  auto socket = small_window_socket(io, port);
  boost::asio::write(socket, boost::asio::buffer(long_streaming_request(kTokens)));
  // Read nothing until the whole answer has been produced: the kernel stops taking the writes,
  // and the tokens produced meanwhile wait in the server for the write in flight.
  ASSERT_TRUE(eventually([&] { return requests_live(port) == 0; }, 30.0));
  EXPECT_GE(metric(port, "gangway_client_writes_waited_total"), 1);
  const std::string received =
      read_until(socket, [](const std::string& bytes) { return bytes.ends_with("\r\n0\r\n\r\n"); });
  // One request on this server: its writes (one per token until the kernel stopped taking
  // them, then one per completed write; plus the /load and /metrics answers above, one write
  // each) are far fewer than its tokens.
  EXPECT_LT(metric(port, "gangway_client_writes_total"), kTokens / 2);

  const size_t body_at = received.find("\r\n\r\n");
  ASSERT_NE(body_at, std::string::npos);
  EXPECT_THAT(received, ::testing::StartsWith("HTTP/1.1 200 OK\r\n"));
  bool ended = false;
  const auto chunks = http_chunks(std::string_view(received).substr(body_at + 4), ended);
  EXPECT_TRUE(ended);
  // Every HTTP chunk holds whole SSE events (a token's is a chunk of its own; the finish
  // events share the last one): the tokens in order, the finish chunk, usage, [DONE].
  std::vector<std::string> events;
  for (const auto& chunk : chunks) {
    ASSERT_THAT(chunk, ::testing::EndsWith("\n\n")) << "an event split across chunks";
    size_t at = 0;
    while (at < chunk.size()) {
      const size_t end = chunk.find("\n\n", at);
      ASSERT_EQ(chunk.compare(at, 6, "data: "), 0) << chunk;
      events.push_back(chunk.substr(at + 6, end - at - 6));
      at = end + 2;
    }
  }
  ASSERT_EQ(events.size(), static_cast<size_t>(kTokens) + 3);
  EXPECT_GE(chunks.size(), static_cast<size_t>(kTokens));
  const auto event = [&](size_t i) { return json::parse(events[i]); };
  for (int i = 0; i < kTokens; ++i) {
    const json token = event(static_cast<size_t>(i));
    ASSERT_EQ(token["choices"][0]["text"].get<std::string>(), emulated_token_text(i))
        << "token " << i;
  }
  EXPECT_EQ(event(kTokens)["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(event(kTokens + 1)["usage"]["completion_tokens"], kTokens);
  EXPECT_EQ(events[kTokens + 2], "[DONE]");
  EXPECT_EQ(metric(port, "gangway_slow_readers_cut_total"), 0);
  EXPECT_EQ(metric(port, "gangway_client_disconnects_total"), 0);
}

TEST(ServerStreamWritesTest, TheFirstTokenIsNotHeldBackForLaterOnes) {
  // A write every 1,024 tokens after the first, and an answer shorter than that: the first
  // token (with the status line) must still leave in a write of its own, and the other tokens
  // with the finish events in one more.
  RunningServer server(patient_scenario("stream_interval_tokens: 1024"));
  const uint16_t port = server.port();
  const std::string before = http_call(port, "GET", "/metrics").body;
  const auto reply = post_json(port, "/v1/completions",
                               R"({"model":"small","prompt":"hi","max_tokens":100,)"
                               R"("ignore_eos":true,"stream":true})");
  const std::string after = http_call(port, "GET", "/metrics").body;
  ASSERT_EQ(reply.status, 200);
  EXPECT_THAT(reply.body, ::testing::EndsWith("data: [DONE]\n\n"));
  // Writes the kernel took only in part count twice (the send() and the asynchronous rest);
  // the /metrics answer before the request is counted too.
  const auto delta = [&](const std::string& sample) {
    return metric_value(after, sample) - metric_value(before, sample);
  };
  EXPECT_EQ(delta("gangway_client_writes_total") - delta("gangway_client_writes_waited_total"),
            1 + 2);
}

TEST(ServerStreamWritesTest, AClientGoneWhileItsOutputWaitsCancelsItsRequestOnce) {
  RunningServer server(patient_scenario());
  const uint16_t port = server.port();
  boost::asio::io_context io;
  auto socket = small_window_socket(io, port);
  boost::asio::write(socket, boost::asio::buffer(long_streaming_request(3000)));  // ~6 s of tokens
  // Never read: a write waits for the socket, and the tokens after it coalesce behind it.
  ASSERT_TRUE(
      eventually([&] { return metric(port, "gangway_client_writes_waited_total") >= 1; }, 10.0));
  ASSERT_EQ(requests_live(port), 1);
  // Gone with unread bytes: the kernel resets the connection.
  socket.set_option(boost::asio::socket_base::linger(true, 0));
  socket.close();
  ASSERT_TRUE(eventually([&] { return requests_live(port) == 0; }, 5.0));
  // Another request through the same network thread: anything the old connection still had
  // queued has run by the time it is answered.
  EXPECT_EQ(post_json(port, "/v1/completions", R"({"model":"small","prompt":"hi","max_tokens":2})")
                .status,
            200);
  const std::string metrics = http_call(port, "GET", "/metrics").body;
  expect_one_client_disconnect(metrics);
  EXPECT_EQ(metric_value(metrics, "gangway_connection_errors_total"), 0);
  EXPECT_EQ(metric_value(metrics, "gangway_kv_usage_ratio{model=\"small\"}"), 0);
}

}  // namespace
}  // namespace gangway::stream_writes_test
