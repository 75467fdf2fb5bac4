// A continuous-batching engine as a model, after vLLM's v1 scheduler: a waiting queue and a
// running set, one iteration at a time, each timed by gangway's cost model. Sans-I/O: it reads no
// clock and does no I/O; its driver (the test engine's HTTP side, or a test) owns time and calls
// begin_iteration() / end_iteration() as the iterations it times run out.
//
// Each iteration is planned with a token budget of max_num_batched_tokens:
//  1. the running set first, in order: a decoding request takes one token, a request still in
//     its prompt takes the next chunk of it (as much as the budget has left: chunked prefill);
//     when the KV cache has no free block for it, the most recently admitted running request is
//     preempted (its blocks freed, its tokens recomputed later, back to the front of the queue);
//  2. then waiting requests, first come first served, while the budget, max_num_seqs and free
//     KV blocks allow.
// A request whose computed tokens catch up with its known tokens (prompt plus output so far)
// samples one output token at the end of the iteration. It ends with "length" at max_tokens, or
// "stop" at stop_after_tokens when that comes first.
//
// Pause (pause_mode.h): keep plans nothing more (running requests stay with their KV); wait
// plans only the requests already started until none is left; abort ends every request at once.
// An iteration in flight always finishes and delivers its tokens. Every request gets exactly one
// finished update: from end_iteration(), abort() or pause(kAbort).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "batching/engine_limits.h"
#include "batching/engine_request.h"
#include "batching/pause_mode.h"
#include "core/time.h"
#include "model/cost_model.h"

namespace gangway {

class ContinuousBatchingEngine {
 public:
  enum class AddResult : uint8_t {
    kAccepted,
    kTooLong,    // prompt + max_tokens over max_model_len
    kDuplicate,  // an unfinished request has this id
    kInvalid,    // prompt_tokens < 1 or max_tokens < 1
  };

  struct Counters {
    int64_t prompt_tokens = 0;      // prompt tokens computed (recomputation included)
    int64_t generation_tokens = 0;  // output tokens sampled
    int64_t preemptions = 0;
    int64_t iterations = 0;
    std::array<int64_t, 3> finished{};  // indexed by FinishReason
  };

  // cost must outlive the engine. REQUIRES: limits' fields positive.
  ContinuousBatchingEngine(const CostModel& cost, EngineLimits limits);

  AddResult add(const EngineRequest& request);
  // Ends an unfinished request with "abort" (its finished update), or nullopt if the id is
  // unknown or already finished.
  std::optional<RequestUpdate> abort(uint64_t id);

  // Plans the next iteration and returns how long it takes, or nullopt when there is nothing to
  // run (idle, paused, or an iteration already in flight).
  std::optional<Duration> begin_iteration();
  bool iteration_in_flight() const { return in_flight_; }
  // Ends the iteration in flight: the tokens it sampled, one update per request that got one
  // (and for each request it finished). Empty if none was in flight.
  std::vector<RequestUpdate> end_iteration();

  // Pauses in `mode` (a later pause replaces an earlier one's mode); the abort mode returns the
  // finished updates of every request it ended.
  std::vector<RequestUpdate> pause(PauseMode mode);
  void resume();
  bool is_paused() const { return pause_mode_.has_value(); }
  std::optional<PauseMode> pause_mode() const { return pause_mode_; }
  // The pause has taken effect: no iteration in flight, and for wait, no started request left.
  bool pause_complete() const;

  int64_t running() const { return static_cast<int64_t>(running_.size()); }
  int64_t waiting() const { return static_cast<int64_t>(waiting_.size()); }
  int64_t used_blocks() const { return used_blocks_; }
  // Used KV blocks over all blocks, in [0, 1].
  double kv_usage() const;
  const Counters& counters() const { return counters_; }
  const EngineLimits& limits() const { return limits_; }

 private:
  struct Sequence {
    EngineRequest request;
    int32_t computed_tokens = 0;
    int32_t output_tokens = 0;
    int64_t blocks = 0;
    bool started = false;  // has been in the running set (a wait pause lets it finish)
  };
  struct Planned {
    uint64_t id = 0;
    int32_t tokens = 0;
  };

  int64_t blocks_for(int64_t tokens) const;
  int64_t free_blocks() const { return limits_.kv_blocks - used_blocks_; }
  // Known tokens: prompt plus output so far; what must be computed before the next sample.
  static int32_t known_tokens(const Sequence& sequence) {
    return sequence.request.prompt_tokens + sequence.output_tokens;
  }
  void plan_running(int32_t& budget, BatchShape& shape);
  void plan_waiting(int32_t& budget, BatchShape& shape);
  void plan(Sequence& sequence, int32_t tokens, BatchShape& shape);
  void preempt_last_running();
  void release(uint64_t id);
  RequestUpdate finish(Sequence& sequence, FinishReason reason, int32_t new_tokens);

  const CostModel& cost_;
  EngineLimits limits_;
  std::unordered_map<uint64_t, Sequence> sequences_;
  std::deque<uint64_t> waiting_;
  std::vector<uint64_t> running_;
  std::vector<Planned> plan_;
  int64_t used_blocks_ = 0;
  bool in_flight_ = false;
  std::optional<PauseMode> pause_mode_;
  Counters counters_;
};

}  // namespace gangway
