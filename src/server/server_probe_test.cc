// Liveness under load: GET /health is answered on the network thread from what the scheduler
// loop last published, so that a probe answers at once while the loop's thread is busy (an
// overload burst); a loop's thread that leaves a probe's ping unanswered for
// server.scheduler_stall_s is reported stalled (503). The tests block the loop's thread with a
// piece of work that waits for the test, so nothing depends on timing.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "server/server_harness_for_tests.h"

namespace gangway {
namespace {

using nlohmann::json;
using testing::http_call;
using testing::RunningServer;

// Holds the scheduler loop's thread in a piece of work until release() (or destruction).
class SchedulerThreadBlocker {
 public:
  explicit SchedulerThreadBlocker(HttpServer& server) {
    auto entered = std::make_shared<std::promise<void>>();
    std::future<void> in = entered->get_future();
    server.run_on_scheduler_thread_for_tests([entered, released = release_.get_future().share()] {
      entered->set_value();
      released.wait();
    });
    in.wait();  // the loop's thread is inside the work now
  }
  ~SchedulerThreadBlocker() { release(); }
  void release() {
    if (!released_) release_.set_value();
    released_ = true;
  }

 private:
  std::promise<void> release_;
  bool released_ = false;
};

std::string with_server_keys(const std::string& keys) {
  std::string yaml = testing::kTestScenario;
  const std::string section = "server:\n";
  yaml.insert(yaml.find(section) + section.size(), keys);
  return yaml;
}

TEST(ServerProbeTest, HealthAndReadyAnswerWhileTheSchedulerThreadIsBusy) {
  RunningServer server;
  SchedulerThreadBlocker blocked(server.server());
  testing::HttpReply reply = http_call(server.port(), "GET", "/health");
  EXPECT_EQ(reply.status, 200);
  const json health = json::parse(reply.body);
  EXPECT_EQ(health["status"], "ok");
  EXPECT_EQ(health["live_requests"], 0);
  EXPECT_EQ(health["draining"], false);
  EXPECT_EQ(reply.header("content-type"), "application/json");
  EXPECT_EQ(http_call(server.port(), "GET", "/ready").status, 200);
  blocked.release();
  EXPECT_EQ(http_call(server.port(), "GET", "/health").status, 200);
}

TEST(ServerProbeTest, ASchedulerThreadThatLeavesAPingUnansweredIsReportedStalled) {
  // A stall limit of 0: a ping still out at the next probe is a stall.
  RunningServer server(with_server_keys("  scheduler_stall_s: 0\n"));
  SchedulerThreadBlocker blocked(server.server());
  // The first probe finds no ping out (ok) and sends one, which the blocked thread cannot answer.
  EXPECT_EQ(http_call(server.port(), "GET", "/health").status, 200);
  const testing::HttpReply stalled = http_call(server.port(), "GET", "/health");
  EXPECT_EQ(stalled.status, 503);
  const json body = json::parse(stalled.body);
  EXPECT_EQ(body["status"], "stalled");
  EXPECT_TRUE(body.contains("live_requests") && body.contains("draining") &&
              body.contains("stalled_s"));
  blocked.release();
  // /load is answered by the loop's thread after the ping (one queue, in order): once it has
  // answered, the ping has been answered too.
  EXPECT_EQ(http_call(server.port(), "GET", "/load").status, 200);
  const testing::HttpReply recovered = http_call(server.port(), "GET", "/health");
  EXPECT_EQ(recovered.status, 200);
  EXPECT_EQ(json::parse(recovered.body)["status"], "ok");
}

TEST(ServerProbeTest, HealthCountsTheLiveRequestsTheLoopPublished) {
  RunningServer server;
  // The loop publishes before it sends a piece of work's events: once a stream's first token is
  // here, /health counts its request.
  boost::asio::io_context io;
  auto socket = testing::connect_to(io, server.port());
  const std::string body =
      R"({"model":"small","prompt":"a long story","max_tokens":4000,"ignore_eos":true,"stream":true})";
  const std::string request =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  boost::asio::write(socket, boost::asio::buffer(request));
  std::string received;
  char buffer[4096];
  while (received.find("data:") == std::string::npos) {
    received.append(buffer, socket.read_some(boost::asio::buffer(buffer)));
  }
  EXPECT_EQ(json::parse(http_call(server.port(), "GET", "/health").body)["live_requests"], 1);
}

TEST(ServerProbeTest, HealthStopsCountingARequestOnceItsAnswerIsComplete) {
  RunningServer server;
  // The request ends in an emulated iteration's completion, not in a posted piece of work: the
  // loop publishes before that completion's events go out too, so once the client has the whole
  // answer, /health no longer counts it.
  const auto reply = testing::post_json(
      server.port(), "/v1/completions",
      R"({"model":"small","prompt":"a short story","max_tokens":3,"ignore_eos":true})");
  ASSERT_EQ(reply.status, 200);
  EXPECT_EQ(json::parse(http_call(server.port(), "GET", "/health").body)["live_requests"], 0);
}

}  // namespace
}  // namespace gangway
