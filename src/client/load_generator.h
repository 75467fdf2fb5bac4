// `gangway load`: an open-loop load generator for a running gangway (or any OpenAI-compatible)
// server, like vLLM's serving benchmark, reading the same workload as the simulator.
//
// Requests come from a RequestSource (the scenario's synthetic streams or its trace replay), so
// a load run sends the request sequence a simulation of the same scenario feeds its scheduler:
// same arrival times, same prompt lengths, the same prefix structure (prompts are synthesized
// with synthesize_prompt_text(), which the emulated tokenizer reads back as exactly the
// request's prompt tokens and block structure), the stream's max_tokens, and min_tokens set to
// the request's true output length (the emulated engine stops there: docs/server.md).
//
// Open loop: each request is sent at its arrival time whether or not earlier ones have been
// answered, on a kept-alive connection from a pool or a new one. Every answer is streamed
// (SSE); the client measures TTFT (first token event), TPOT and end-to-end latency per class and
// model into the simulator's RunMetrics, so a real run and a simulated run print the same STATS
// JSON. From the "gangway" object of the final chunk it also takes the emulated engine's share
// of TTFT and reports the difference: the TTFT the server and the network add.
//
// One thread, one io_context; run() blocks until every request has an outcome or the drain
// timeout after the last arrival has passed (what is still open then ends as cancelled,
// driver_stopped, as in the simulator).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "config/scenario.h"
#include "metrics/run_metrics.h"
#include "metrics/streaming_histogram.h"
#include "server/openai_request.h"
#include "workload/request_source.h"

namespace gangway {

struct LoadTarget {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;
};

// Parses "http://HOST:PORT" (a trailing "/" or "/v1" is allowed). InputError for anything else.
LoadTarget parse_load_url(const std::string& url);

struct LoadOptions {
  LoadTarget target;
  Endpoint endpoint = Endpoint::kCompletions;
  // Arrivals stop at `duration`; afterwards answers are awaited up to drain_timeout.
  Duration duration = std::chrono::seconds(60);
  // Requests that arrive before this are sent but left out of every statistic (the simulator's
  // warm-up: the measured window is [warmup, duration)).
  Duration warmup{0};
  Duration drain_timeout = std::chrono::seconds(60);
  // Open connections at most; a request that finds none free waits (counted as send lag).
  int32_t max_connections = 16384;
  // Redraws a progress line on `progress` twice a second when set (a terminal).
  std::ostream* progress = nullptr;
};

struct LoadResult {
  explicit LoadResult(const NodeSpec& node);

  RunMetrics metrics;
  double window_s = 0;  // the measured arrival window, duration - warmup
  double wall_s = 0;    // until the last answer
  int64_t sent = 0;
  // Actual send time minus the arrival time the workload asked for.
  StreamingHistogram send_lag_ms;
  // Client-measured TTFT minus the engine's share the server reported (completed requests).
  StreamingHistogram server_added_ttft_ms;
  StreamingHistogram engine_ttft_ms;
  // Requests that failed below HTTP (connect, reset, malformed answer), by message.
  std::map<std::string, int64_t> transport_errors;
  std::map<int, int64_t> http_status;
  int64_t peak_connections = 0;
};

class LoadGenerator {
 public:
  // `scenario` names the models, classes and tenants; `source` is read lazily.
  LoadGenerator(const Scenario& scenario, RequestSource& source, LoadOptions options);
  ~LoadGenerator();

  LoadResult run();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gangway
