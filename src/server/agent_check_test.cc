// The agent-check port of `gangway serve` (agent_check.h): one line of HAProxy's agent grammar
// per connection, from the node's own load report; "drain" once a drain has begun.
#include "server/agent_check.h"

#include <gtest/gtest.h>

#include <boost/asio/write.hpp>
#include <string>
#include <thread>

#include "engine/free_port_for_tests.h"
#include "server/server_harness_for_tests.h"

namespace gangway {
namespace {

std::string with_agent_port(uint16_t port) {
  return std::string(testing::kTestScenario) + "  agent_port: " + std::to_string(port) + "\n";
}

TEST(AgentCheckTest, AnIdleNodeAnswersReadyAtFullWeightAndCloses) {
  const uint16_t agent = free_port();
  testing::RunningServer server(with_agent_port(agent));
  EXPECT_EQ(server.server().agent_port(), agent);
  // HAProxy sends nothing and reads one line; the server closes after it.
  EXPECT_EQ(testing::raw_exchange(agent, ""), "ready 100%\n");
  // Whatever a client sends is ignored (agent-send strings, stray bytes).
  EXPECT_EQ(testing::raw_exchange(agent, "hello\n"), "ready 100%\n");
}

TEST(AgentCheckTest, ManyChecksInARowAreEachAnswered) {
  const uint16_t agent = free_port();
  testing::RunningServer server(with_agent_port(agent));
  for (int i = 0; i < 50; ++i) ASSERT_EQ(testing::raw_exchange(agent, ""), "ready 100%\n") << i;
  // A client that connects and leaves at once does not disturb the next one.
  for (int i = 0; i < 20; ++i) {
    boost::asio::io_context io;
    auto socket = testing::connect_to(io, agent);
    socket.close();
  }
  EXPECT_EQ(testing::raw_exchange(agent, ""), "ready 100%\n");
}

TEST(AgentCheckTest, ADrainingNodeSaysDrainWhileItsRequestsFinish) {
  const uint16_t agent = free_port();
  testing::RunningServer server(with_agent_port(agent));
  // A long stream keeps the node draining (2 ms iterations, 2,000 tokens: about 4 s).
  boost::asio::io_context io;
  auto stream = testing::connect_to(io, server.port());
  const std::string body =
      R"({"model":"small","prompt":"hello","max_tokens":2000,"ignore_eos":true,"stream":true})";
  const std::string request =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  boost::asio::write(stream, boost::asio::buffer(request));
  char first[256];
  ASSERT_GT(stream.read_some(boost::asio::buffer(first)), 0u);  // the stream has started
  server.server().begin_drain();
  EXPECT_TRUE(testing::eventually([&] { return testing::raw_exchange(agent, "") == "drain\n"; }));
  EXPECT_EQ(testing::http_call(server.port(), "GET", "/ready").status, 503);
  server.stop();
}

TEST(AgentCheckTest, ATakenPortIsAClearConfigurationError) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor holder(
      io, {boost::asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(0)});
  const uint16_t taken = holder.local_endpoint().port();
  Scenario scenario = parse_scenario(with_agent_port(taken), "agent.yaml");
  scenario.server.port = 0;
  const Logger log(LogLevel::kError);
  try {
    HttpServer server(scenario, scenario.server, log, HttpServer::Options{});
    FAIL() << "bound a port another socket holds";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("server.agent_port"), std::string::npos) << message;
    EXPECT_NE(message.find("127.0.0.1:" + std::to_string(taken)), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace gangway
