// Test support for the server: a real `gangway serve` (HttpServer) on a free loopback port,
// running on a background thread, and small blocking HTTP clients to talk to it. Header-only and
// used only by tests (the *_for_tests.h suffix keeps the layering test from counting it).
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "config/scenario.h"
#include "server/http_server.h"
#include "server/log.h"

namespace gangway::testing {

// Small, fast node: constant-time iterations so tests finish in milliseconds.
inline const char* kTestScenario = R"(
name: server-test
seed: 7
models:
  - name: small
    tier: small
    shape: llama-3-8b
    max_context_tokens: 4096
    cost: {model: constant, iteration_ms: 2}
  - name: large
    tier: large
    shape: llama-3-70b
    tensor_parallel: 8
    max_context_tokens: 4096
    cost: {model: constant, iteration_ms: 4}
tenants: [default, acme]
workload:
  streams:
    - name: chat
      model: small
      class: interactive
      arrival: {process: poisson, rate_per_s: 10}
      prompt_tokens: 64
      output_tokens: 8
      max_tokens: 64
server:
  read_timeout_s: 0.5
  write_stall_timeout_s: 1
  max_body_kib: 64
  max_header_kib: 8
  max_output_buffer_kib: 16
  socket_send_buffer_kib: 16
  drain_grace_s: 5
  log_level: error
)";

class RunningServer {
 public:
  // Logs at `log_level` to `log_fd` (stderr by default; a test that checks a log line passes a
  // file's descriptor).
  explicit RunningServer(const std::string& yaml = kTestScenario,
                         LogLevel log_level = LogLevel::kError, int log_fd = 2)
      : scenario_(parse_scenario(yaml, "server-test.yaml")), log_(log_level, log_fd) {
    scenario_.server.port = 0;
    server_ =
        std::make_unique<HttpServer>(scenario_, scenario_.server, log_, HttpServer::Options{});
    thread_ = std::thread([this] { exit_status_ = server_->run(); });
  }
  ~RunningServer() { stop(); }

  uint16_t port() const { return server_->port(); }
  HttpServer& server() { return *server_; }
  const Scenario& scenario() const { return scenario_; }
  // Stops at once (requests in flight end driver_stopped) and waits; returns run()'s status.
  int stop() {
    if (thread_.joinable()) {
      server_->stop_now();
      thread_.join();
    }
    return exit_status_;
  }
  // Waits for run() to return by itself (after a drain).
  int wait() {
    if (thread_.joinable()) thread_.join();
    return exit_status_;
  }

 private:
  Scenario scenario_;
  Logger log_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  int exit_status_ = -1;
};

// A test suite whose tests share one server with the test scenario, started before the first
// test and stopped after the last.
class SharedServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new RunningServer(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static uint16_t port() { return server_->port(); }
  static inline RunningServer* server_ = nullptr;
};

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;                            // de-chunked

  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

inline void set_receive_timeout(boost::asio::ip::tcp::socket& socket, double seconds) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(seconds);
  tv.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(tv.tv_sec)) * 1e6);
  setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

inline boost::asio::ip::tcp::socket connect_to(boost::asio::io_context& io, uint16_t port) {
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  set_receive_timeout(socket, 10);
  return socket;
}

inline HttpReply http_call(uint16_t port, const std::string& method, const std::string& target,
                           const std::string& body = "",
                           std::vector<std::pair<std::string, std::string>> headers = {
                               {"Content-Type", "application/json"}}) {
  namespace http = boost::beast::http;
  boost::asio::io_context io;
  auto socket = connect_to(io, port);
  http::request<http::string_body> request(http::string_to_verb(method), target, 11);
  request.set(http::field::host, "127.0.0.1");
  for (const auto& [name, value] : headers) request.set(name, value);
  request.body() = body;
  if (!body.empty() || method == "POST") request.prepare_payload();
  http::write(socket, request);
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 * 1024 * 1024);
  http::read(socket, buffer, parser);
  HttpReply reply;
  reply.status = static_cast<int>(parser.get().result_int());
  for (const auto& field : parser.get()) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    reply.headers[name] = std::string(field.value());
  }
  reply.body = parser.get().body();
  return reply;
}

inline HttpReply post_json(uint16_t port, const std::string& target, const std::string& body) {
  return http_call(port, "POST", target, body);
}

// Sends raw bytes and reads until the server closes or `seconds` pass.
inline std::string raw_exchange(uint16_t port, const std::string& bytes, double seconds = 5) {
  boost::asio::io_context io;
  auto socket = connect_to(io, port);
  set_receive_timeout(socket, seconds);
  boost::asio::write(socket, boost::asio::buffer(bytes));
  std::string out;
  char chunk[4096];
  for (;;) {
    boost::system::error_code error;
    const size_t n = socket.read_some(boost::asio::buffer(chunk), error);
    if (error || n == 0) break;
    out.append(chunk, n);
  }
  return out;
}

// Polls `probe` until it returns true or `seconds` pass.
template <typename Probe>
bool eventually(Probe&& probe, double seconds = 5) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (probe()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return probe();
}

// The value of one sample line of /metrics ("name{labels} value"), or -1.
inline double metric_value(const std::string& metrics, const std::string& sample) {
  const size_t at = metrics.find("\n" + sample + " ");
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + sample.size() + 2));
}

// The /metrics of a server on which one interactive request of model "small" ended because its
// client went away: counted once as a disconnect and once as finished, cancelled.
inline void expect_one_client_disconnect(const std::string& metrics) {
  EXPECT_EQ(metric_value(metrics, "gangway_client_disconnects_total"), 1);
  EXPECT_EQ(metric_value(metrics,
                         "gangway_requests_finished_total{model=\"small\","
                         "slo_class=\"interactive\",outcome=\"cancelled\","
                         "reason=\"client_cancelled\"}"),
            1);
}

}  // namespace gangway::testing
