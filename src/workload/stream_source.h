// One synthetic stream of requests (one StreamSpec), generated lazily in arrival order.
//
// Everything random is drawn from Rng::for_stream(seed, stream_index, purpose), one sub-stream per
// purpose (arrival times, lengths, prefix groups, session decisions), so that a stream's requests
// do not depend on any other stream, and changing, say, the output length distribution leaves the
// arrival times as they were.
//
// Memory is constant in the number of requests: the next session start, plus one pending turn
// (holding its context as a short list of segments) per active session, at most
// SessionSpec::max_active_sessions of them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "workload/arrival_process.h"
#include "workload/block_hash.h"
#include "workload/length_sampler.h"
#include "workload/request_source.h"
#include "workload/rng.h"
#include "workload/workload_spec.h"

namespace gangway {

class StreamSource final : public RequestSource {
 public:
  struct Counters {
    int64_t requests = 0;
    int64_t sessions_started = 0;  // first turns whose session was remembered
    // First turns that found max_active_sessions sessions active, so stayed one-turn sessions.
    int64_t sessions_not_tracked = 0;
    // Sessions that ended because their next prompt would exceed max_prompt_tokens.
    int64_t sessions_ended_at_max_prompt = 0;
    // First turns cut to max_prompt_tokens.
    int64_t prompts_truncated = 0;
  };

  // Validates the spec (InputError). stream_index keys the random streams and the content of
  // the stream's own tokens; items come out with stream 0 (a MergedSource renumbers them).
  StreamSource(StreamSpec spec, uint16_t stream_index, uint64_t seed, int32_t kv_block_tokens = 16);

  std::optional<Time> peek_arrival() const override;
  std::optional<WorkloadItem> next() override;
  size_t stream_count() const override { return 1; }
  std::string stream_name(size_t) const override { return spec_.name; }

  const StreamSpec& spec() const { return spec_; }
  const Counters& counters() const { return counters_; }
  size_t active_sessions() const { return pending_turns_.size(); }

 private:
  struct PendingTurn {
    Time arrival;
    uint64_t order = 0;  // tie-break among turns due at the same time: scheduled first, first
    std::vector<ContentSegment> context;
    int32_t context_tokens = 0;
    int32_t user_tokens = 0;
  };
  static bool later(const PendingTurn& a, const PendingTurn& b);

  uint64_t unique_content(uint64_t request_seq, uint64_t part) const;
  // After a session's turn: maybe schedule the next one.
  void continue_session(std::vector<ContentSegment> context, int64_t context_tokens, Time arrival);

  StreamSpec spec_;
  int32_t kv_block_tokens_;
  ArrivalProcess arrivals_;
  Rng length_rng_;
  Rng prefix_rng_;
  Rng session_rng_;
  LengthSampler prompt_sampler_;
  LengthSampler output_sampler_;
  std::optional<ZipfSampler> group_sampler_;
  uint64_t pool_hash_ = 0;
  uint64_t unique_salt_ = 0;

  std::optional<Time> next_start_;
  std::vector<PendingTurn> pending_turns_;  // a min-heap by (arrival, order)
  // A request's content segments, kept between requests so that building one allocates nothing
  // (a session's turn takes them with it).
  std::vector<ContentSegment> segment_storage_;
  uint64_t turns_scheduled_ = 0;
  Counters counters_;
};

}  // namespace gangway
