// Replays a recorded trace (Azure, Mooncake or BurstGPT) as a request source for the simulator.
//
// Streams the file (one row, or one group of rows sharing a timestamp, of lookahead), so memory
// does not grow with the trace. Each row becomes one request: arrival from the row's time
// (re-based to the window's start, divided by rate_scale, optionally spread within timestamp
// groups), model/class/tenant from the first mapping rule that takes it (the stream number is
// the rule's index), prompt and true output lengths from the row, and prefix block hashes at the
// node's block size: Mooncake's hash_ids are cut into our blocks so equal trace prefixes give
// equal hashes; rows without prefix information get hashes unique to the row.
//
// Lengths: a prompt or output of 0 tokens is replayed as 1 (a request has at least one prompt
// token and produces at least its first token); burstgpt rows with Response tokens == 0 are
// failures and are skipped.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workload/block_hash.h"
#include "workload/request_source.h"
#include "workload/trace/trace_row_reader.h"
#include "workload/trace/trace_spec.h"

namespace gangway {

class TraceSource final : public RequestSource {
 public:
  struct Counters {
    int64_t rows_read = 0;      // data rows read so far, failures included
    int64_t failed_rows = 0;    // burstgpt rows with Response tokens == 0
    int64_t before_window = 0;  // rows before start_s (rows from end_s on are never read)
    int64_t unmapped_rows = 0;  // rows that no mapping rule took
    int64_t requests = 0;       // requests handed out or waiting in the lookahead
  };

  // Validates the spec and reads up to the first request. InputError if the file cannot be
  // opened, is malformed up to there, or yields no request at all (empty, nothing in the
  // window, nothing mapped).
  TraceSource(TraceSpec spec, uint64_t seed, int32_t kv_block_tokens = 16);
  ~TraceSource() override;

  std::optional<Time> peek_arrival() const override;
  std::optional<WorkloadItem> next() override;
  size_t stream_count() const override { return rules_.size(); }
  std::string stream_name(size_t stream) const override;

  Counters counters() const;
  const TraceSpec& spec() const { return spec_; }

 private:
  bool next_timed_row(TraceRow& row);
  bool fill_group();
  std::optional<size_t> map_row(const TraceRow& row) const;
  WorkloadItem make_item(const TraceRow& row, size_t rule);
  std::optional<WorkloadItem> advance();

  TraceSpec spec_;
  std::vector<TraceMappingRule> rules_;
  std::string file_stem_;
  int32_t kv_block_tokens_;
  std::unique_ptr<TraceRowReader> reader_;
  uint64_t mapping_salt_ = 0;
  uint64_t content_salt_ = 0;
  uint64_t unique_salt_ = 0;
  int64_t start_ns_ = 0;
  std::optional<int64_t> end_ns_;
  bool spread_ = false;

  // Spreading: the current group of rows with one timestamp, and the first row after it.
  std::vector<TraceRow> group_;
  size_t group_pos_ = 0;
  std::optional<TraceRow> carry_;
  int64_t last_gap_ns_ = 0;

  bool done_ = false;
  int64_t last_time_seen_ns_ = 0;
  Counters counters_;
  std::vector<ContentSegment> segments_;  // scratch
  std::optional<WorkloadItem> lookahead_;
};

// The prompt and true output lengths of every request a replay of `spec` with `seed` would produce
// (window, failures, mapping and max_tokens policy applied), for an empirical LengthSpec. Reads the
// whole file; memory is 8 bytes a request.
struct TraceLengths {
  std::vector<int32_t> prompt_tokens;
  std::vector<int32_t> output_tokens;
};
TraceLengths read_trace_lengths(const TraceSpec& spec, uint64_t seed = 0);

}  // namespace gangway
