#include "workload/stream_source.h"

#include <algorithm>
#include <utility>

#include "core/input_error.h"

namespace gangway {
namespace {

// Sub-streams of a stream's random numbers, one per purpose.
enum Purpose : uint64_t { kArrivals = 0, kLengths = 1, kPrefixGroups = 2, kSessions = 3 };
// Parts of a request's own content.
enum ContentPart : uint64_t { kUserText = 0, kOutputText = 1 };

constexpr uint64_t kUniqueContentTag = 0x756e69717565ULL;  // "unique"

StreamSpec validated(StreamSpec spec) {
  validate(spec);
  return spec;
}

// With sessions, the arrival process starts sessions: at new_session_probability times the
// rate, so that all turns together arrive at about the configured rate.
ArrivalSpec session_start_arrivals(const StreamSpec& spec) {
  ArrivalSpec arrival = spec.arrival;
  if (spec.sessions) arrival.rate_scale *= spec.sessions->new_session_probability;
  return arrival;
}

}  // namespace

StreamSource::StreamSource(StreamSpec spec, uint16_t stream_index, uint64_t seed,
                           int32_t kv_block_tokens)
    : spec_(validated(std::move(spec))),
      kv_block_tokens_(kv_block_tokens),
      arrivals_(session_start_arrivals(spec_), Rng::for_stream(seed, stream_index, kArrivals)),
      length_rng_(Rng::for_stream(seed, stream_index, kLengths)),
      prefix_rng_(Rng::for_stream(seed, stream_index, kPrefixGroups)),
      session_rng_(Rng::for_stream(seed, stream_index, kSessions)),
      prompt_sampler_(spec_.prompt_tokens),
      output_sampler_(spec_.output_tokens),
      unique_salt_(mix_pair(mix_pair(seed, stream_index), kUniqueContentTag)) {
  if (kv_block_tokens_ <= 0) {
    throw InputError::at("", std::nullopt, "kv_block_tokens", "expected a number >= 1");
  }
  if (spec_.prefix) {
    group_sampler_.emplace(spec_.prefix->groups, spec_.prefix->zipf_s);
    pool_hash_ = hash_string(spec_.prefix->pool.empty() ? spec_.name : spec_.prefix->pool);
  }
  next_start_ = arrivals_.next();
}

bool StreamSource::later(const PendingTurn& a, const PendingTurn& b) {
  if (a.arrival != b.arrival) return a.arrival > b.arrival;
  return a.order > b.order;
}

uint64_t StreamSource::unique_content(uint64_t request_seq, uint64_t part) const {
  return mix_pair(unique_salt_, (request_seq << 1) | part);
}

std::optional<Time> StreamSource::peek_arrival() const {
  std::optional<Time> earliest = next_start_;
  if (!pending_turns_.empty()) {
    const Time turn = pending_turns_.front().arrival;
    if (!earliest || turn <= *earliest) earliest = turn;
  }
  return earliest;
}

std::optional<WorkloadItem> StreamSource::next() {
  const bool take_turn =
      !pending_turns_.empty() && (!next_start_ || pending_turns_.front().arrival <= *next_start_);
  if (!take_turn && !next_start_) return std::nullopt;

  const uint64_t seq = static_cast<uint64_t>(counters_.requests);
  // The segments' storage is reused from the last request unless a session kept it.
  std::vector<ContentSegment> segments = std::move(segment_storage_);
  segments.clear();
  int32_t prompt_tokens = 0;
  Time arrival;
  bool is_session_turn = false;

  if (take_turn) {
    std::pop_heap(pending_turns_.begin(), pending_turns_.end(), later);
    PendingTurn turn = std::move(pending_turns_.back());
    pending_turns_.pop_back();
    arrival = turn.arrival;
    segments = std::move(turn.context);
    segments.push_back({unique_content(seq, kUserText), turn.user_tokens});
    prompt_tokens = turn.context_tokens + turn.user_tokens;
    is_session_turn = true;
  } else {
    arrival = *next_start_;
    next_start_ = arrivals_.next();
    int32_t group_tokens = 0;
    if (spec_.prefix) {
      const int64_t group = group_sampler_->sample(prefix_rng_);
      group_tokens = spec_.prefix->group_tokens;
      segments.push_back({mix_pair(pool_hash_, static_cast<uint64_t>(group)), group_tokens});
    }
    int32_t user_tokens = prompt_sampler_.sample(length_rng_);
    const int32_t limit = spec_.max_prompt_tokens;
    if (static_cast<int64_t>(group_tokens) + user_tokens > limit) {
      ++counters_.prompts_truncated;
      group_tokens = std::min(group_tokens, limit);
      user_tokens = limit - group_tokens;
      if (!segments.empty()) segments.back().tokens = group_tokens;
    }
    segments.push_back({unique_content(seq, kUserText), user_tokens});
    prompt_tokens = group_tokens + user_tokens;
  }

  const int32_t output_tokens = std::min(output_sampler_.sample(length_rng_), spec_.max_tokens);

  WorkloadItem item;
  item.spec.id = RequestId(seq);
  item.spec.model = spec_.model;
  item.spec.slo_class = spec_.slo_class;
  item.spec.tenant = spec_.tenant;
  item.spec.arrival = arrival;
  item.spec.prompt_tokens = prompt_tokens;
  item.spec.max_tokens = spec_.max_tokens;
  append_block_hashes(segments, kv_block_tokens_, item.spec.prefix_blocks);
  item.output_tokens = output_tokens;
  item.stream = 0;
  ++counters_.requests;

  if (spec_.sessions) {
    bool remembered = is_session_turn;
    if (!is_session_turn) {
      if (pending_turns_.size() < static_cast<size_t>(spec_.sessions->max_active_sessions)) {
        ++counters_.sessions_started;
        remembered = true;
      } else {
        ++counters_.sessions_not_tracked;
      }
    }
    if (remembered) {
      segments.push_back({unique_content(seq, kOutputText), output_tokens});
      continue_session(std::move(segments), int64_t{prompt_tokens} + output_tokens, arrival);
      return item;
    }
  }
  segment_storage_ = std::move(segments);
  return item;
}

void StreamSource::continue_session(std::vector<ContentSegment> context, int64_t context_tokens,
                                    Time arrival) {
  const SessionSpec& sessions = *spec_.sessions;
  if (!session_rng_.bernoulli(1.0 - sessions.new_session_probability)) return;
  const double think_s =
      sessions.think_time_s > 0.0 ? session_rng_.exponential(1.0 / sessions.think_time_s) : 0.0;
  const int32_t user_tokens = prompt_sampler_.sample(session_rng_);
  if (context_tokens + user_tokens > spec_.max_prompt_tokens) {
    ++counters_.sessions_ended_at_max_prompt;
    return;
  }
  PendingTurn turn;
  turn.arrival = arrival + seconds_to_duration(think_s);
  turn.order = turns_scheduled_++;
  turn.context = std::move(context);
  turn.context_tokens = static_cast<int32_t>(context_tokens);
  turn.user_tokens = user_tokens;
  pending_turns_.push_back(std::move(turn));
  std::push_heap(pending_turns_.begin(), pending_turns_.end(), later);
}

}  // namespace gangway
