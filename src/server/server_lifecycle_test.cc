// What happens around a request rather than in it: a client that goes away mid-stream cancels
// its request at once (and its KV is freed), a reader too slow for too long is cut off, and
// SIGTERM's drain stops admitting, finishes what is in flight (or stops it when the grace period
// is over) and ends run() with status 0. With server.scheduler_thread `shared` the same holds,
// and the scheduler core runs on network thread 0 (no thread of its own).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "server/server_harness_for_tests.h"

namespace gangway {
namespace {

using nlohmann::json;
using testing::eventually;
using testing::expect_one_client_disconnect;
using ::testing::HasSubstr;
using testing::http_call;
using testing::metric_value;
using testing::post_json;
using testing::RunningServer;

std::string streaming_request(int max_tokens) {
  const std::string body = R"({"model":"small","prompt":"tell me a long story","max_tokens":)" +
                           std::to_string(max_tokens) + R"(,"ignore_eos":true,"stream":true})";
  return "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string with_scheduler_thread(const std::string& where) {
  std::string yaml = testing::kTestScenario;
  yaml.replace(yaml.find("server:\n"), 8, "server:\n  scheduler_thread: " + where + "\n");
  return yaml;
}

// Threads of this process with the given name (/proc/self/task/*/comm).
int threads_named(const std::string& name) {
  int count = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) ++count;
  }
  return count;
}

int64_t live_requests(uint16_t port) {
  return json::parse(http_call(port, "GET", "/load").body)["live_requests"].get<int64_t>();
}

TEST(ServerLifecycleTest, ClientThatDisconnectsMidStreamCancelsItsRequestAtOnce) {
  RunningServer server;
  boost::asio::io_context io;
  auto socket = testing::connect_to(io, server.port());
  boost::asio::write(socket, boost::asio::buffer(streaming_request(3000)));  // ~6 s of tokens
  char chunk[1024];
  const size_t n = socket.read_some(boost::asio::buffer(chunk));
  ASSERT_GT(n, 0u);
  ASSERT_THAT(std::string(chunk, n), ::testing::StartsWith("HTTP/1.1 200"));
  EXPECT_EQ(live_requests(server.port()), 1);
  socket.close();
  // One iteration (2 ms) is the longest the core may keep it; allow for a loaded machine.
  EXPECT_TRUE(eventually([&] { return live_requests(server.port()) == 0; }, 2.0));
  const std::string metrics = http_call(server.port(), "GET", "/metrics").body;
  expect_one_client_disconnect(metrics);
  EXPECT_EQ(metric_value(metrics, "gangway_kv_usage_ratio{model=\"small\"}"), 0);
}

TEST(ServerLifecycleTest, ReaderTooSlowIsCutOffWithALoggedReasonAndItsRequestCancelled) {
  char log_path[] = "/tmp/gangway-slow-reader-log.XXXXXX";
  const int log_fd = mkstemp(log_path);
  ASSERT_GE(log_fd, 0);
  RunningServer server(testing::kTestScenario, LogLevel::kWarn, log_fd);
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.open(boost::asio::ip::tcp::v4());
  socket.set_option(boost::asio::socket_base::receive_buffer_size(2048));
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), server.port()});
  boost::asio::write(socket, boost::asio::buffer(streaming_request(4000)));
  // Never read. The server's buffer (16 KiB in the test config) or its 1 s write stall limit
  // runs out first.
  EXPECT_TRUE(eventually(
      [&] {
        return metric_value(http_call(server.port(), "GET", "/metrics").body,
                            "gangway_slow_readers_cut_total") >= 1;
      },
      8.0));
  EXPECT_TRUE(eventually([&] { return live_requests(server.port()) == 0; }, 2.0));
  EXPECT_EQ(post_json(server.port(), "/v1/completions",
                      R"({"model":"small","prompt":"still fine","max_tokens":1})")
                .status,
            200);
  server.stop();
  std::ifstream log_file(log_path);
  const std::string log((std::istreambuf_iterator<char>(log_file)), {});
  close(log_fd);
  unlink(log_path);
  EXPECT_THAT(log, HasSubstr(" slow_reader_cut "));
  EXPECT_THAT(log, ::testing::ContainsRegex("slow_reader_cut .*reason="));
}

// The drain is the same whether the scheduler has a thread of its own or shares network
// thread 0's.
class ServerDrainTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ServerDrainTest, FinishesRequestsInFlightRefusesNewOnesAndExitsZero) {
  RunningServer server(with_scheduler_thread(GetParam()));
  std::string streamed;
  std::thread in_flight([&] {
    streamed = testing::raw_exchange(server.port(), streaming_request(300), 10);  // ~0.6 s
  });
  ASSERT_TRUE(eventually([&] { return live_requests(server.port()) == 1; }, 2.0));
  server.server().begin_drain();
  EXPECT_TRUE(eventually([&] { return http_call(server.port(), "GET", "/ready").status == 503; }));
  const auto refused =
      post_json(server.port(), "/v1/completions", R"({"model":"small","prompt":"x"})");
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(json::parse(refused.body)["error"]["code"], "draining");
  EXPECT_EQ(json::parse(refused.body)["error"]["type"], "overloaded_error");
  EXPECT_FALSE(refused.header("retry-after").empty());
  in_flight.join();
  EXPECT_THAT(streamed, ::testing::StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(streamed, HasSubstr("\"finish_reason\":\"length\""));
  EXPECT_THAT(streamed, HasSubstr("data: [DONE]"));
  EXPECT_EQ(server.wait(), 0);
}

INSTANTIATE_TEST_SUITE_P(EachSchedulerThread, ServerDrainTest, ::testing::Values("own", "shared"),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param;
                         });

TEST(ServerLifecycleTest, DrainGraceOverStopsWhatIsLeftAndStillExitsZero) {
  std::string yaml = testing::kTestScenario;
  yaml.replace(yaml.find("drain_grace_s: 5"), 16, "drain_grace_s: 0.3");
  RunningServer server(yaml);
  std::string streamed;
  std::thread in_flight([&] {
    streamed = testing::raw_exchange(server.port(), streaming_request(3000), 10);  // ~6 s
  });
  ASSERT_TRUE(eventually([&] { return live_requests(server.port()) == 1; }, 2.0));
  const auto start = std::chrono::steady_clock::now();
  server.server().begin_drain();
  EXPECT_EQ(server.wait(), 0);
  in_flight.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_THAT(streamed, HasSubstr(R"("code":"driver_stopped")"));
  EXPECT_THAT(streamed, HasSubstr("data: [DONE]"));
}

TEST(ServerLifecycleTest, SchedulerRunsOnItsOwnThreadOrSharesNetworkThreadZero) {
  {
    RunningServer server(with_scheduler_thread("own"));
    ASSERT_EQ(http_call(server.port(), "GET", "/health").status, 200);
    EXPECT_EQ(threads_named("gw-scheduler"), 1);
  }
  RunningServer server(with_scheduler_thread("shared"));
  ASSERT_EQ(http_call(server.port(), "GET", "/health").status, 200);
  EXPECT_EQ(threads_named("gw-scheduler"), 0);
  // A streamed answer, whole and in order, with its metrics.
  const std::string streamed = testing::raw_exchange(server.port(), streaming_request(20), 10);
  EXPECT_THAT(streamed, ::testing::StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(streamed, HasSubstr("\"finish_reason\":\"length\""));
  EXPECT_THAT(streamed, HasSubstr("data: [DONE]"));
  const std::string metrics = http_call(server.port(), "GET", "/metrics").body;
  EXPECT_EQ(metric_value(metrics, "vllm:generation_tokens_total{model_name=\"small\"}"), 20);
  // A request in flight when the server stops ends driver_stopped, and run() returns 0.
  std::string stopped;
  std::thread in_flight([&] {
    stopped = testing::raw_exchange(server.port(), streaming_request(3000), 10);  // ~6 s
  });
  ASSERT_TRUE(eventually([&] { return live_requests(server.port()) == 1; }, 2.0));
  EXPECT_EQ(server.stop(), 0);
  in_flight.join();
  EXPECT_THAT(stopped, HasSubstr(R"("code":"driver_stopped")"));
}

}  // namespace
}  // namespace gangway
