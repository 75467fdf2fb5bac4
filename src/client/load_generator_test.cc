// gangway load against a real server: every request of the source is sent at its arrival time
// and measured, and a kept-alive connection that the server closed while it sat idle in the pool
// (the server's read timeout) does not turn into a failed request: the request is sent again on
// a fresh connection, because nothing of an answer came back. A stream cut off mid-answer is a
// failed request at once, even when its last bytes and the close arrive together.
#include "client/load_generator.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/write.hpp>
#include <chrono>
#include <functional>
#include <thread>
#include <tuple>
#include <vector>

#include "server/loopback_answer_server_for_tests.h"
#include "server/server_harness_for_tests.h"

namespace gangway {
namespace {

// Requests at fixed times, small model, first class, first tenant.
class FixedSource final : public RequestSource {
 public:
  explicit FixedSource(std::vector<double> arrivals_s) : arrivals_s_(std::move(arrivals_s)) {}
  std::optional<Time> peek_arrival() const override {
    if (next_ >= arrivals_s_.size()) return std::nullopt;
    return Time::zero() + seconds_to_duration(arrivals_s_[next_]);
  }
  std::optional<WorkloadItem> next() override {
    const std::optional<Time> arrival = peek_arrival();
    if (!arrival) return std::nullopt;
    WorkloadItem item;
    item.spec.id = RequestId(next_);
    item.spec.model = ModelId(0);
    item.spec.slo_class = SloClassId(0);
    item.spec.tenant = TenantId(0);
    item.spec.arrival = *arrival;
    item.spec.prompt_tokens = 20;
    item.spec.max_tokens = 8;
    item.output_tokens = 3;
    ++next_;
    return item;
  }
  size_t stream_count() const override { return 1; }
  std::string stream_name(size_t) const override { return "fixed"; }

 private:
  std::vector<double> arrivals_s_;
  size_t next_ = 0;
};

// gangway load of `scenario`'s models, classes and tenants against the server on `port`: requests
// at `arrivals_s`, sent for `duration`, then up to `drain_timeout` for their answers.
LoadResult run_load(const Scenario& scenario, uint16_t port, std::vector<double> arrivals_s,
                    Duration duration, Duration drain_timeout = std::chrono::seconds(10)) {
  FixedSource source(std::move(arrivals_s));
  LoadOptions options;
  options.target.port = port;
  options.duration = duration;
  options.drain_timeout = drain_timeout;
  LoadGenerator generator(scenario, source, options);
  return generator.run();
}

LoadResult run_load(const testing::RunningServer& server, std::vector<double> arrivals_s,
                    double duration_s) {
  return run_load(server.scenario(), server.port(), std::move(arrivals_s),
                  seconds_to_duration(duration_s));
}

TEST(LoadGeneratorTest, SendsEveryRequestAndMeasuresItFromTheClientSide) {
  testing::RunningServer server;
  const LoadResult result = run_load(server, {0.0, 0.01, 0.02, 0.03, 0.2}, 0.3);
  EXPECT_EQ(result.sent, 5);
  EXPECT_TRUE(result.transport_errors.empty());
  EXPECT_EQ(result.http_status.at(200), 5);
  const RequestStats& total = result.metrics.total();
  EXPECT_EQ(total.arrived(), 5u);
  EXPECT_EQ(total.completed(), 5u);
  EXPECT_EQ(total.output_tokens(), 5u * 3);  // min_tokens carried the true output length
  EXPECT_EQ(total.ttft_ms().count(), 5u);
  EXPECT_EQ(result.server_added_ttft_ms.count(), 5u);
}

TEST(LoadGeneratorTest, PooledConnectionClosedByTheServerWhileIdleIsRetriedNotFailed) {
  // The test server closes a kept-alive connection idle for 0.5 s (read_timeout_s); the load
  // generator keeps idle connections for reuse up to 5 s. Each request after the first therefore
  // goes out on a connection the server has already closed, and is sent again on a new one.
  testing::RunningServer server;
  const LoadResult result = run_load(server, {0.0, 1.0, 2.0}, 2.1);
  EXPECT_EQ(result.sent, 3);
  EXPECT_TRUE(result.transport_errors.empty())
      << result.transport_errors.size() << " kinds, first: "
      << (result.transport_errors.empty() ? "" : result.transport_errors.begin()->first);
  EXPECT_EQ(result.metrics.total().completed(), 3u);
  EXPECT_EQ(result.http_status.at(200), 3);
}

// A loopback server that hands each connection it accepts to a handler, on a thread of its own.
// A server built on it starts it at the end of its constructor and stops it first in its
// destructor, so that the handler never sees a member that does not exist yet or any more.
class AcceptingServer {
 public:
  uint16_t port() const { return acceptor_.local_endpoint().port(); }

 protected:
  using Socket = boost::asio::ip::tcp::socket;
  AcceptingServer() : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {}
  ~AcceptingServer() { stop(); }

  void start(std::function<void(Socket&)> handle) {
    thread_ = std::thread([this, handle = std::move(handle)] {
      while (!stopping_) {
        Socket socket(io_);
        boost::system::error_code error;
        acceptor_.accept(socket, error);
        if (error || stopping_) continue;
        handle(socket);
      }
    });
  }
  void stop() {
    if (!thread_.joinable()) return;
    stopping_ = true;
    boost::system::error_code ignored;
    Socket poke(io_);  // wakes the blocking accept
    poke.connect(acceptor_.local_endpoint(), ignored);
    thread_.join();
  }

  // Reads one request and answers it with `answer`; false if the client went away.
  static bool answer_one(Socket& socket, const std::string& answer) {
    namespace http = boost::beast::http;
    boost::system::error_code error;
    boost::beast::flat_buffer buffer;
    http::request<http::string_body> request;
    http::read(socket, buffer, request, error);
    if (error) return false;
    boost::asio::write(socket, boost::asio::buffer(answer), error);
    return !error;
  }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
};

// A server that answers every request with the same bytes, then closes the connection.
class FixedAnswerServer : public AcceptingServer {
 public:
  explicit FixedAnswerServer(std::string answer) : answer_(std::move(answer)) {
    start([this](Socket& socket) {
      if (!answer_one(socket, answer_)) return;
      boost::system::error_code error;
      socket.shutdown(Socket::shutdown_both, error);
    });
  }
  ~FixedAnswerServer() { stop(); }

 private:
  const std::string answer_;
};

TEST(LoadGeneratorTest, ErrorBodiesWithoutAnOpenAiErrorObjectAreReadByTheirStatus) {
  // JSON objects without "error" (or with a string there) are not OpenAI error bodies: the
  // status decides the reason (429 rate_limited, other statuses no_capacity).
  testing::RunningServer node;  // only for its scenario (models, classes, tenants)
  for (const auto& [status, body, reason] :
       std::vector<std::tuple<std::string, std::string, Reason>>{
           {"429 Too Many Requests", R"({"detail":"slow down"})", Reason::kRateLimited},
           {"503 Service Unavailable", R"({"error":"overloaded"})", Reason::kNoCapacity},
           {"503 Service Unavailable", R"({"error":{"code":7}})", Reason::kNoCapacity}}) {
    FixedAnswerServer server(fmt::format(
        "HTTP/1.1 {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: "
        "close\r\n\r\n{}",
        status, body.size(), body));
    const LoadResult result =
        run_load(node.scenario(), server.port(), {0.0}, std::chrono::milliseconds(10));
    EXPECT_TRUE(result.transport_errors.empty()) << body;
    EXPECT_EQ(result.metrics.total().rejected(), 1u) << body;
    EXPECT_EQ(result.metrics.total().count_with_reason(reason), 1u) << body;
  }
}

LoadResult run_against(const FixedAnswerServer& server, const Scenario& scenario) {
  return run_load(scenario, server.port(), {0.0}, std::chrono::milliseconds(10));
}

TEST(LoadGeneratorTest, AnAnswerClaimingAHugeLengthFailsWithoutExhaustingMemory) {
  // Beast reserves a sized body's length up front: 800 GB here, unless the answer is limited.
  testing::RunningServer node;
  FixedAnswerServer server(
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: "
      "842949672969\r\n\r\n{\"error\":{}}");
  const LoadResult result = run_against(server, node.scenario());
  EXPECT_EQ(result.metrics.total().failed(), 1u);
  EXPECT_EQ(result.transport_errors.size(), 1u);
}

TEST(LoadGeneratorTest, ReadsAStreamSentWithoutChunkedCoding) {
  // An HTTP/1.1 stream ended by the server's close, as a server without chunked coding sends it.
  testing::RunningServer node;
  FixedAnswerServer server(
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
      "data: {\"choices\":[{\"index\":0,\"text\":\" a\",\"finish_reason\":null}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"text\":\" b\",\"finish_reason\":\"stop\"}]}\n\n"
      "data: [DONE]\n\n");
  const LoadResult result = run_against(server, node.scenario());
  EXPECT_TRUE(result.transport_errors.empty())
      << (result.transport_errors.empty() ? "" : result.transport_errors.begin()->first);
  EXPECT_EQ(result.metrics.total().completed(), 1u);
  EXPECT_EQ(result.metrics.total().output_tokens(), 2u);
}

// A server that keeps connections alive and then closes every idle one at once, as a server
// does when its keep-alive timeout passes or it restarts: it answers the first `pooled`
// connections one request each (keep-alive), then closes all of them, and answers every later
// connection once (Connection: close). It counts the connections it accepted.
class ClosesIdleConnectionsServer : public AcceptingServer {
 public:
  explicit ClosesIdleConnectionsServer(int pooled) : pooled_(pooled) {
    start([this](Socket& socket) { serve(socket); });
  }
  ~ClosesIdleConnectionsServer() { stop(); }
  int accepted() const { return accepted_; }
  // Whether the pooled connections have been closed (the later requests can go out).
  bool closed_pooled() const { return closed_pooled_; }

 private:
  static std::string answer(bool keep_alive) {
    return streamed_answer(
        {R"({"choices":[{"index":0,"text":" a","finish_reason":null}]})",
         R"({"choices":[{"index":0,"text":" b","finish_reason":"length"}]})", "[DONE]"},
        keep_alive ? "" : "Connection: close\r\n");
  }

  void serve(Socket& socket) {
    ++accepted_;
    boost::system::error_code error;
    if (static_cast<int>(pooled_sockets_.size()) < pooled_) {
      if (!answer_one(socket, answer(/*keep_alive=*/true))) return;
      pooled_sockets_.push_back(std::move(socket));
      if (static_cast<int>(pooled_sockets_.size()) == pooled_) {
        for (Socket& idle : pooled_sockets_) idle.close(error);
        closed_pooled_ = true;
      }
      return;
    }
    answer_one(socket, answer(/*keep_alive=*/false));
    socket.shutdown(Socket::shutdown_both, error);
  }

  const int pooled_;
  std::vector<Socket> pooled_sockets_;
  std::atomic<int> accepted_{0};
  std::atomic<bool> closed_pooled_{false};
};

TEST(LoadGeneratorTest, RetryAfterAStalePooledConnectionGoesOutOnAFreshOne) {
  // Two requests at once fill the pool with two kept-alive connections, which the server then
  // closes while they sit idle. The third request takes one of them and gets nothing back; its
  // retry must not take the other closed one (and count a transport error) but open a new
  // connection: three connections in all, every request completed.
  ClosesIdleConnectionsServer server(/*pooled=*/2);
  testing::RunningServer node;  // only for its scenario (models, classes, tenants)
  const LoadResult result =
      run_load(node.scenario(), server.port(), {0.0, 0.0, 0.5}, std::chrono::milliseconds(600));
  ASSERT_TRUE(server.closed_pooled());
  EXPECT_TRUE(result.transport_errors.empty())
      << result.transport_errors.size() << " kinds, first: "
      << (result.transport_errors.empty() ? "" : result.transport_errors.begin()->first);
  EXPECT_EQ(result.metrics.total().completed(), 3u);
  EXPECT_EQ(server.accepted(), 3);
}

// The answer of an OpenAI-compatible server that spells its JSON as many do: spaces after colons
// and commas, CRLF line endings, the last token in the same chunk as the finish reason, no usage
// chunk (Connection: close).
std::string spaced_json_answer() {
  return streamed_answer(
      {R"({"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": " a", "logprobs": null, "finish_reason": null}]})",
       R"({"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": " b", "logprobs": null, "finish_reason": null}]})",
       R"({"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": " c", "logprobs": null, "finish_reason": "length"}]})",
       "[DONE]"},
      "Connection: close\r\n", "\r\n");
}

TEST(LoadGeneratorTest, ReadsAServerThatSpellsItsJsonWithSpaces) {
  FixedAnswerServer server(spaced_json_answer());
  const Scenario scenario = parse_scenario(testing::kTestScenario, "server-test.yaml");
  const LoadResult result =
      run_load(scenario, server.port(), {0.0, 0.01, 0.02}, std::chrono::milliseconds(100));
  EXPECT_TRUE(result.transport_errors.empty())
      << (result.transport_errors.empty() ? "" : result.transport_errors.begin()->first);
  const RequestStats& total = result.metrics.total();
  EXPECT_EQ(total.completed(), 3u);
  // Three tokens each, the last of them in the chunk with the finish reason.
  EXPECT_EQ(total.output_tokens(), 3u * 3);
  EXPECT_EQ(total.ttft_ms().count(), 3u);
}

// A server that answers one request with the head of a streamed answer and one token event,
// then closes at once, all in one send: what a proxy delivers when the node behind it dies in
// the middle of a stream.
class CutOffServer {
 public:
  CutOffServer() {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(listen(listener_, 4), 0);
    socklen_t length = sizeof address;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve_one(); });
  }
  ~CutOffServer() {
    thread_.join();
    close(listener_);
  }
  uint16_t port() const { return port_; }

 private:
  void serve_one() {
    const int client = accept(listener_, nullptr, nullptr);
    if (client < 0) return;
    // The whole request (head and the small JSON body) arrives in one piece on loopback.
    char buffer[65536];
    (void)recv(client, buffer, sizeof buffer, 0);
    const std::string answer =
        streamed_answer_head() +
        streamed_event_chunk(R"({"choices":[{"index":0,"text":" the","finish_reason":null}]})");
    // Answered once the client waits in its read poller (not in the read it tries right after
    // sending), and corked: the answer leaves only with the close, one segment that carries the
    // last bytes and the FIN together, so the poller reports both in one wake-up.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const int cork = 1;
    setsockopt(client, IPPROTO_TCP, TCP_CORK, &cork, sizeof cork);
    (void)send(client, answer.data(), answer.size(), MSG_NOSIGNAL);
    close(client);
  }

  int listener_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

TEST(LoadGeneratorTest, StreamCutOffTogetherWithItsLastBytesFailsAtOnce) {
  // A short read that carries the end of stream is not "drained": under edge-triggered polling
  // no further wake-up comes, so the exchange must fail at once rather than wait for the drain
  // timeout and end cancelled (driver_stopped).
  CutOffServer server;
  testing::RunningServer node;  // only for its scenario (models, classes, tenants)
  const LoadResult result = run_load(node.scenario(), server.port(), {0.0},
                                     std::chrono::milliseconds(10), std::chrono::seconds(5));
  EXPECT_EQ(result.sent, 1);
  EXPECT_EQ(result.metrics.total().failed(), 1u);
  EXPECT_EQ(result.metrics.total().cancelled(), 0u);
  EXPECT_EQ(result.transport_errors.size(), 1u);
}

}  // namespace
}  // namespace gangway
