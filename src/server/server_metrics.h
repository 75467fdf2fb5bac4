// The server's /metrics page in the Prometheus text format: gangway's own metrics and, for the
// quantities that have a counterpart, the same values under the names vLLM's OpenAI server
// exports (vllm:num_requests_running, vllm:time_to_first_token_seconds, ...; label model_name),
// so that gateways and dashboards built for vLLM read a gangway node unchanged.
//
// Why its own histograms: Prometheus histograms are cumulative counts over fixed bucket bounds,
// which the scraper aggregates across nodes; the metrics layer's StreamingHistogram answers
// quantiles instead. The bounds are vLLM's, so panels and alerts that assume them still work.
//
// Owned and fed by the scheduler loop's thread (the only writer); counters kept on network
// threads (HTTP status codes, open connections) come in as atomics. Never reads a clock: every
// observation carries its value.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/node_spec.h"
#include "core/outcome.h"
#include "metrics/request_stats.h"
#include "sched/load_report.h"

namespace gangway {

// Counters that network threads bump; read when /metrics is rendered.
struct HttpCounters {
  static constexpr std::array<int, 14> kStatuses = {200, 400, 404, 405, 408, 413, 415,
                                                    429, 431, 499, 500, 503, 504, 0};
  std::array<std::atomic<uint64_t>, kStatuses.size()> responses{};  // by kStatuses index; 0: other
  std::atomic<int64_t> open_connections{0};
  std::atomic<uint64_t> connections_total{0};
  std::atomic<uint64_t> slow_readers_cut_total{0};
  std::atomic<uint64_t> read_timeouts_total{0};
  std::atomic<uint64_t> client_disconnects_total{0};
  // Writes of answer bytes to client sockets: one per send() tried at once, plus one per
  // asynchronous write started. Streamed tokens over writes is the coalescing achieved.
  std::atomic<uint64_t> client_writes_total{0};
  // Writes the kernel did not take whole at once (a client behind on reading): the rest goes out
  // asynchronously, and output produced meanwhile waits to leave in the next write.
  std::atomic<uint64_t> client_writes_waited_total{0};
  // Requests whose handling threw (answered 500 or closed; the server goes on).
  std::atomic<uint64_t> connection_errors_total{0};
  // Connections closed at accept: over the limits and the probe reserve.
  std::atomic<uint64_t> connections_refused_total{0};
  // Connections taken into the probe reserve (over max_connections or the per-client limit).
  std::atomic<uint64_t> reserve_connections_total{0};

  void count_response(int status) {
    size_t i = 0;
    while (i + 1 < kStatuses.size() && kStatuses[i] != status) ++i;
    responses[i].fetch_add(1, std::memory_order_relaxed);
  }
};

// A Prometheus histogram: fixed upper bounds, per-bucket counts, sum and count.
class PrometheusHistogram {
 public:
  explicit PrometheusHistogram(std::vector<double> upper_bounds);
  void observe(double value);
  // Appends NAME_bucket{LABELS,le=...}, NAME_sum{LABELS}, NAME_count{LABELS} lines.
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; last is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

// What the loop measures about its own work, for the profile section of /metrics.
struct LoopCounters {
  uint64_t events = 0;            // handlers run on the loop thread
  double busy_seconds = 0;        // time inside those handlers
  double core_seconds = 0;        // time inside the scheduler core's calls
  uint64_t iterations = 0;        // emulated iterations completed
  double timer_late_seconds = 0;  // sum over iterations of (reported - planned end)
  double timer_late_max_seconds = 0;
};

class ServerMetrics {
 public:
  explicit ServerMetrics(const NodeSpec& node);

  void on_arrival(ModelId model, SloClassId slo_class);
  void on_finished(const RequestRecord& record, bool hit_max_tokens);
  void on_generated_token(ModelId model) { ++generation_tokens_[model.value()]; }
  void on_inter_token(ModelId model, double seconds) {
    inter_token_[model.value()].observe(seconds);
  }

  std::string render(const LoadReport& load, const HttpCounters& http, const LoopCounters& loop,
                     bool draining, int64_t gang_phases) const;

 private:
  size_t request_index(const RequestRecord& record) const;

  const NodeSpec& node_;
  // [model][class][outcome][reason] counts of finished requests.
  std::vector<uint64_t> finished_;
  std::vector<uint64_t> arrived_;                 // [model][class]
  std::vector<uint64_t> slo_met_;                 // [model][class]
  std::vector<uint64_t> prompt_tokens_;           // [model]
  std::vector<uint64_t> generation_tokens_;       // [model]
  std::vector<uint64_t> success_stop_;            // [model]
  std::vector<uint64_t> success_length_;          // [model]
  std::vector<PrometheusHistogram> ttft_;         // [model] (vLLM)
  std::vector<PrometheusHistogram> inter_token_;  // [model] (vLLM)
  std::vector<PrometheusHistogram> e2e_;          // [model] (vLLM)
  std::vector<PrometheusHistogram> queue_;        // [model] (vLLM)
  std::vector<PrometheusHistogram> class_ttft_;   // [model][class] (gangway)
};

}  // namespace gangway
