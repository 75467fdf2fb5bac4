// The scenario's `server:` section: defaults, every key read, and strict errors.
#include "config/server_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/scenario.h"
#include "core/input_error.h"

namespace gangway {
namespace {

const char* kBase = R"(
models:
  - {name: m, tier: small, shape: llama-3-8b}
workload:
  streams:
    - {name: s, model: m, arrival: {rate_per_s: 1}, prompt_tokens: 8, output_tokens: 4}
)";

Scenario with_server(const std::string& section) {
  return parse_scenario(std::string(kBase) + section, "server.yaml");
}

TEST(ServerConfigTest, DefaultsWithoutTheSection) {
  const ServerConfig config = with_server("").server;
  EXPECT_EQ(config.host, "127.0.0.1");
  EXPECT_EQ(config.port, 8000);
  EXPECT_FALSE(config.agent_port.has_value());
  EXPECT_EQ(config.network_threads, 1);
  EXPECT_EQ(config.scheduler_thread, SchedulerThread::kOwn);
  EXPECT_EQ(config.read_timeout, std::chrono::seconds(15));
  EXPECT_EQ(config.scheduler_stall_limit, std::chrono::seconds(10));
  EXPECT_EQ(config.emulated_output.kind, EmulatedOutputSpec::Kind::kWorkload);
}

TEST(ServerConfigTest, ReadsEveryKey) {
  const ServerConfig config = with_server(R"(
server:
  host: 0.0.0.0
  port: 9000
  agent_port: 9100
  network_threads: 2
  scheduler_thread: shared
  max_connections: 50
  max_header_kib: 4
  max_body_kib: 128
  read_timeout_s: 2.5
  write_stall_timeout_s: 3
  max_output_buffer_kib: 64
  socket_send_buffer_kib: 32
  stream_interval_tokens: 4
  drain_grace_s: 0
  scheduler_stall_s: 2.5
  default_slo_class: batch
  emulated_output_tokens: {dist: geometric, mean: 20}
  log_level: debug
)")
                                  .server;
  EXPECT_EQ(config.host, "0.0.0.0");
  EXPECT_EQ(config.port, 9000);
  EXPECT_EQ(config.agent_port, 9100);
  EXPECT_EQ(config.network_threads, 2);
  EXPECT_EQ(config.scheduler_thread, SchedulerThread::kShared);
  EXPECT_EQ(config.max_connections, 50);
  EXPECT_EQ(config.max_header_bytes, 4 * 1024);
  EXPECT_EQ(config.max_body_bytes, 128 * 1024);
  EXPECT_EQ(config.read_timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(config.write_stall_timeout, std::chrono::seconds(3));
  EXPECT_EQ(config.max_output_buffer_bytes, 64 * 1024);
  EXPECT_EQ(config.socket_send_buffer_bytes, 32 * 1024);
  EXPECT_EQ(config.stream_interval_tokens, 4);
  EXPECT_EQ(config.drain_grace, Duration(0));
  EXPECT_EQ(config.scheduler_stall_limit, std::chrono::milliseconds(2500));
  EXPECT_EQ(config.default_slo_class, "batch");
  EXPECT_EQ(config.emulated_output.kind, EmulatedOutputSpec::Kind::kLength);
  EXPECT_EQ(config.emulated_output.length.kind, LengthSpec::Kind::geometric);
  EXPECT_EQ(config.log_level, "debug");
  EXPECT_EQ(
      with_server("server: {emulated_output_tokens: max_tokens}\n").server.emulated_output.kind,
      EmulatedOutputSpec::Kind::kMaxTokens);
  EXPECT_EQ(
      with_server("server: {emulated_output_tokens: 7}\n").server.emulated_output.length.value, 7);
}

TEST(ServerConfigTest, ProtectionLimits) {
  const ServerConfig defaults = with_server("").server;
  EXPECT_EQ(defaults.max_connections_per_client, 4096);
  EXPECT_EQ(defaults.probe_reserve_connections, 64);
  EXPECT_EQ(defaults.max_json_depth, 64);
  EXPECT_EQ(defaults.header_timeout, std::chrono::seconds(5));
  const ServerConfig config = with_server(R"(
server:
  max_connections_per_client: 10
  probe_reserve_connections: 0
  max_json_depth: 8
  header_timeout_s: 0.25
)")
                                  .server;
  EXPECT_EQ(config.max_connections_per_client, 10);
  EXPECT_EQ(config.probe_reserve_connections, 0);
  EXPECT_EQ(config.max_json_depth, 8);
  EXPECT_EQ(config.header_timeout, std::chrono::milliseconds(250));
  // The headers' time is part of the whole request's.
  EXPECT_EQ(with_server("server: {read_timeout_s: 2}\n").server.header_timeout,
            std::chrono::seconds(2));
}

TEST(ServerConfigTest, StrictErrorsNameTheKey) {
  auto error_of = [](const std::string& section) {
    try {
      with_server(section);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  using ::testing::HasSubstr;
  EXPECT_THAT(error_of("server: {prot: 1}\n"), HasSubstr("server"));
  EXPECT_THAT(error_of("server: {port: 70000}\n"), HasSubstr("server.port"));
  EXPECT_THAT(error_of("server: {default_slo_class: gold}\n"),
              HasSubstr("server.default_slo_class"));
  EXPECT_THAT(error_of("server: {read_timeout_s: 0}\n"), HasSubstr("server.read_timeout_s"));
  EXPECT_THAT(error_of("server: {emulated_output_tokens: sometimes}\n"),
              HasSubstr("server.emulated_output_tokens"));
  EXPECT_THAT(error_of("server: {log_level: loud}\n"), HasSubstr("server.log_level"));
  EXPECT_THAT(error_of("server: {scheduler_thread: both}\n"),
              HasSubstr("server.scheduler_thread: expected one of own, shared, got 'both'"));
  EXPECT_THAT(error_of("server: {max_json_depth: 1}\n"), HasSubstr("server.max_json_depth"));
  EXPECT_THAT(error_of("server: {header_timeout_s: -1}\n"), HasSubstr("server.header_timeout_s"));
  EXPECT_THAT(error_of("server: {max_connections_per_client: 0}\n"),
              HasSubstr("server.max_connections_per_client"));
  EXPECT_THAT(error_of("server: {agent_port: 0}\n"), HasSubstr("server.agent_port"));
  // The agent port may not be the HTTP port (the default 8000 included): located at its line.
  EXPECT_THAT(error_of("server:\n  agent_port: 8000\n"),
              HasSubstr("server.yaml:8: server.agent_port: the agent-check port must differ from "
                        "server.port (8000)"));
}

}  // namespace
}  // namespace gangway
