// The `server:` section of a scenario: how `gangway serve` listens, the limits it puts on each
// connection and request, its timeouts, how long a drain may take, and how its emulated GPUs
// decide the length of an answer. The simulator ignores the section; the server reads the rest
// of the scenario (node, models, classes, tenants, policy, workload) exactly as the simulator
// does. docs/server.md documents every key and why each default is what it is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/engine_config.h"
#include "config/yaml_reader.h"
#include "core/node_spec.h"
#include "core/time.h"
#include "workload/workload_spec.h"

namespace gangway {

// How the emulated engine picks the number of tokens it generates for a request that did not set
// ignore_eos or min_tokens (those win: see docs/server.md).
struct EmulatedOutputSpec {
  enum class Kind : uint8_t {
    kWorkload,   // a seeded draw from the scenario's own output length distribution
    kMaxTokens,  // always max_tokens (as if every request set ignore_eos)
    kLength,     // a seeded draw from `length`
  };
  Kind kind = Kind::kWorkload;
  LengthSpec length;
};

enum class SchedulerThread : uint8_t { kOwn, kShared };
std::string_view to_string(SchedulerThread where);
std::optional<SchedulerThread> scheduler_thread_from_name(std::string_view name);

struct ServerConfig {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;
  // The agent-check port (HAProxy's agent protocol, server/agent_check.h) on the same address;
  // none: no agent endpoint.
  std::optional<uint16_t> agent_port;
  // Threads that run HTTP connections.
  int32_t network_threads = 1;
  // Where the scheduler core runs (docs/server.md, "Or one thread for both"): on a thread of its
  // own, which connection work never delays, or on network thread 0's event loop, which saves the
  // two threads' hand-offs (a wake-up for each submitted request and each delivery of tokens) and
  // so CPU per request, while connection work on that thread delays the loop's timers.
  SchedulerThread scheduler_thread = SchedulerThread::kOwn;
  // Open connections at most. Beyond this (or beyond max_connections_per_client), a connection
  // goes to the probe reserve, which answers only GET /health, /ready and /metrics.
  int32_t max_connections = 10000;
  // Open connections from one client address at most.
  int32_t max_connections_per_client = 4096;
  // Connections beyond the limits above that are still read, one request each, so that liveness
  // and readiness probes answer when the node is full; the rest are told 503 / 429. Beyond the
  // reserve too, new connections are closed at once.
  int32_t probe_reserve_connections = 64;
  int64_t max_header_bytes = 16 * 1024;
  int64_t max_body_bytes = 2 * 1024 * 1024;
  // Arrays and objects nested deeper than this in a request body are refused before the body
  // is parsed into a document.
  int32_t max_json_depth = 64;
  // From a request's first byte, its request line and headers must arrive within this.
  Duration header_timeout = std::chrono::seconds(5);
  // From a request's first byte, the whole request (headers and body) must arrive within this;
  // a kept-alive connection waits this long for its next request before it is closed.
  Duration read_timeout = std::chrono::seconds(15);
  // A client that has not taken a single byte of a pending write for this long is cut off.
  Duration write_stall_timeout = std::chrono::seconds(10);
  // A connection whose unsent response bytes exceed this is cut off (a reader far too slow).
  int64_t max_output_buffer_bytes = 1024 * 1024;
  // The kernel's send buffer per connection (SO_SNDBUF; it stops the kernel from growing it to
  // megabytes for a client that does not read), so a slow reader is seen within this much.
  int64_t socket_send_buffer_bytes = 256 * 1024;
  // A streamed answer's first token is written at once, later ones every this many tokens
  // (vLLM's stream_interval): fewer writes, and so less CPU, for the same tokens.
  int32_t stream_interval_tokens = 1;
  // GET /health answers 503 "stalled" while the scheduler loop's thread has left a probe's
  // ping unanswered this long (stuck, or this far behind); 0: as soon as a ping is out.
  Duration scheduler_stall_limit = std::chrono::seconds(10);
  // On SIGTERM: how long requests in flight may run before they are stopped.
  Duration drain_grace = std::chrono::seconds(30);
  // Used when a request names no class; empty = the scenario's first class.
  std::string default_slo_class;
  EmulatedOutputSpec emulated_output;
  // debug, info, warn or error.
  std::string log_level = "info";
  // Engine processes in place of the emulated GPUs (engine_config.h, docs/engines.md).
  EnginesConfig engines;
};

// Reads `server:` (after the node's SLO classes, which default_slo_class must name). Throws
// InputError "FILE:LINE: server.KEY: expected ..." for anything malformed or out of range;
// `scenario_path` resolves a trace named by an empirical length.
// `scheduler` and `policy` size the engines' memory shares and pick their tier mode.
ServerConfig read_server_section(const YamlValue& value, const NodeSpec& node,
                                 const std::string& scenario_path,
                                 const SchedulerOptions& scheduler, const PolicySpec& policy);

// The names a `log_level` may take, most verbose first.
bool is_log_level(const std::string& name);

}  // namespace gangway
