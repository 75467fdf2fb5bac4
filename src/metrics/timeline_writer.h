// Streams a GPU timeline as a Chrome trace / Perfetto JSON file, for a person to open in
// ui.perfetto.dev or chrome://tracing and see what every GPU did and why.
//
// Why: gang leases, barriers and SM/LM interleaving are far easier to judge on a picture than in
// numbers. Runs are long (millions of iterations), so events go straight to the std::ostream given
// at construction and nothing is kept in memory. The writer is told times; it never reads a clock.
//
// File layout (the Trace Event Format's JSON object form):
//   {"displayTimeUnit":"ms","traceEvents":[ metadata..., events... ]}
// One process (pid 1, named process_name) holds one track per GPU ("GPU 0".."GPU n-1", tid =
// GPU index + 1, because Perfetto reserves tid 0 for the idle thread) and one "node" track
// (tid = gpu_count + 1) for node-wide spans and counters. Spans are complete events ("ph":"X"),
// markers instant events ("ph":"i", scope "t" on a GPU, "p" across the whole node), counters
// "ph":"C". ts and dur are microseconds written with three decimals, so nanoseconds survive
// exactly. Names and categories are JSON-escaped (invalid UTF-8 becomes U+FFFD); args, when
// given, must be a JSON object.
//
// A window (set_window) limits the file to one stretch of a long run: events that end before it
// or start after it are left out, so that a 20-minute run can be looked at one minute at a time.
//
// The owner keeps the stream alive until close() (or destruction, which closes). Calls after
// close() throw std::logic_error. Not thread-safe.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string_view>

#include "core/ids.h"
#include "core/time.h"

namespace gangway {

// Selects the node-wide track (or, for instants, a marker across every GPU).
struct NodeWide {};
inline constexpr NodeWide kNodeWide{};

class TimelineWriter {
 public:
  // Writes the header and the track metadata. Throws std::invalid_argument when gpu_count < 1.
  TimelineWriter(std::ostream& out, int gpu_count, std::string_view process_name = "gangway node");
  ~TimelineWriter();
  TimelineWriter(const TimelineWriter&) = delete;
  TimelineWriter& operator=(const TimelineWriter&) = delete;

  // A complete event [start, end) on one GPU's track. Throws std::out_of_range for an unknown
  // GPU and std::invalid_argument when end < start or args is not an object.
  void span(GpuId gpu, std::string_view name, std::string_view category, Time start, Time end,
            const nlohmann::json* args = nullptr);
  // The same on the node track (e.g. an LM lease).
  void span(NodeWide, std::string_view name, std::string_view category, Time start, Time end,
            const nlohmann::json* args = nullptr);
  // The same span on several GPU tracks (an LM iteration runs on the whole gang).
  void span_on_gpus(std::span<const GpuId> gpus, std::string_view name, std::string_view category,
                    Time start, Time end, const nlohmann::json* args = nullptr);
  void span_on_all_gpus(std::string_view name, std::string_view category, Time start, Time end,
                        const nlohmann::json* args = nullptr);

  // A marker at one instant (lease start or end, a failure) on one GPU, or across the node.
  void instant(GpuId gpu, std::string_view name, Time at, const nlohmann::json* args = nullptr);
  void instant(NodeWide, std::string_view name, Time at, const nlohmann::json* args = nullptr);

  // A counter sample on the node track (e.g. {"queued": 12, "running": 40}); values must be an
  // object of numbers.
  void counter(std::string_view name, Time at, const nlohmann::json& values);

  // Leaves out every event that lies wholly outside [start, end) (a span that overlaps it is
  // written whole). Throws std::invalid_argument when end <= start.
  void set_window(Time start, Time end);
  // Whether an event over [start, end] would be written (for callers that build costly args).
  bool in_window(Time start, Time end) const {
    return !windowed_ || (end >= window_start_ && start < window_end_);
  }

  // Writes the trailer and flushes. Idempotent.
  void close();
  bool closed() const { return closed_; }
  // Trace events written so far, metadata included.
  uint64_t events_written() const { return events_written_; }
  int gpu_count() const { return gpu_count_; }

  static constexpr int kProcessId = 1;
  static int gpu_thread_id(GpuId gpu) { return gpu.value() + 1; }
  int node_thread_id() const { return gpu_count_ + 1; }

 private:
  void write_span(int thread_id, std::string_view name, std::string_view category, Time start,
                  Time end, const nlohmann::json* args);
  void write_instant(int thread_id, char scope, std::string_view name, Time at,
                     const nlohmann::json* args);
  void write_metadata(int thread_id, std::string_view kind, std::string_view key,
                      const nlohmann::json& value);
  // Starts an event object: separator, then {"name":...,"ph":...,"pid":...,"tid":...
  void begin_event(std::string_view name, char phase, int thread_id);
  void end_event(const nlohmann::json* args);
  int checked_gpu_thread(GpuId gpu) const;
  void require_open() const;

  std::ostream& out_;
  int gpu_count_;
  bool windowed_ = false;
  Time window_start_;
  Time window_end_;
  bool closed_ = false;
  uint64_t events_written_ = 0;
};

// Writes `text` as a JSON string literal (quotes included); exposed for tests.
void write_json_string(std::ostream& out, std::string_view text);
// Writes a time in microseconds with three decimals ("1234.567" for 1234567 ns).
void write_microseconds(std::ostream& out, int64_t ns);

}  // namespace gangway
