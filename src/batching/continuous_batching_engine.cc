#include "batching/continuous_batching_engine.h"

#include <algorithm>
#include <stdexcept>

namespace gangway {

ContinuousBatchingEngine::ContinuousBatchingEngine(const CostModel& cost, EngineLimits limits)
    : cost_(cost), limits_(limits) {
  if (limits_.kv_blocks < 1 || limits_.block_tokens < 1 || limits_.max_num_seqs < 1 ||
      limits_.max_num_batched_tokens < 1 || limits_.max_model_len < 1) {
    throw std::invalid_argument("ContinuousBatchingEngine: every limit must be positive");
  }
  // A request the whole cache cannot hold would wait at the head of the queue forever.
  limits_.max_model_len = static_cast<int32_t>(
      std::min<int64_t>(limits_.max_model_len, limits_.kv_blocks * limits_.block_tokens));
}

int64_t ContinuousBatchingEngine::blocks_for(int64_t tokens) const {
  return (tokens + limits_.block_tokens - 1) / limits_.block_tokens;
}

double ContinuousBatchingEngine::kv_usage() const {
  return static_cast<double>(used_blocks_) / static_cast<double>(limits_.kv_blocks);
}

ContinuousBatchingEngine::AddResult ContinuousBatchingEngine::add(const EngineRequest& request) {
  if (request.prompt_tokens < 1 || request.max_tokens < 1) return AddResult::kInvalid;
  if (static_cast<int64_t>(request.prompt_tokens) + request.max_tokens > limits_.max_model_len) {
    return AddResult::kTooLong;
  }
  if (sequences_.count(request.id)) return AddResult::kDuplicate;
  Sequence sequence;
  sequence.request = request;
  sequence.request.stop_after_tokens = std::max<int32_t>(1, request.stop_after_tokens);
  sequences_.emplace(request.id, sequence);
  waiting_.push_back(request.id);
  return AddResult::kAccepted;
}

void ContinuousBatchingEngine::release(uint64_t id) {
  const auto found = sequences_.find(id);
  if (found == sequences_.end()) return;
  used_blocks_ -= found->second.blocks;
  if (const auto it = std::find(running_.begin(), running_.end(), id); it != running_.end()) {
    running_.erase(it);
  } else if (const auto wit = std::find(waiting_.begin(), waiting_.end(), id);
             wit != waiting_.end()) {
    waiting_.erase(wit);
  }
  sequences_.erase(found);
}

RequestUpdate ContinuousBatchingEngine::finish(Sequence& sequence, FinishReason reason,
                                               int32_t new_tokens) {
  RequestUpdate update;
  update.id = sequence.request.id;
  update.new_tokens = new_tokens;
  update.output_tokens = sequence.output_tokens;
  update.first_token = new_tokens > 0 && sequence.output_tokens == 1;
  update.finished = true;
  update.reason = reason;
  update.prompt_tokens = sequence.request.prompt_tokens;
  ++counters_.finished[static_cast<size_t>(reason)];
  release(sequence.request.id);
  return update;
}

std::optional<RequestUpdate> ContinuousBatchingEngine::abort(uint64_t id) {
  const auto found = sequences_.find(id);
  if (found == sequences_.end()) return std::nullopt;
  return finish(found->second, FinishReason::kAbort, 0);
}

void ContinuousBatchingEngine::plan(Sequence& sequence, int32_t tokens, BatchShape& shape) {
  const bool decode = tokens == 1 && sequence.computed_tokens >= sequence.request.prompt_tokens &&
                      sequence.output_tokens > 0;
  if (decode) {
    ++shape.decode_seqs;
    shape.decode_context_tokens += sequence.computed_tokens + 1;
  } else {
    shape.prefill_tokens += tokens;
    ++shape.prefill_seqs;
    shape.prefill_context_tokens += sequence.computed_tokens;
  }
  const int64_t needed = blocks_for(sequence.computed_tokens + tokens) - sequence.blocks;
  if (needed > 0) {
    sequence.blocks += needed;
    used_blocks_ += needed;
  }
  plan_.push_back(Planned{sequence.request.id, tokens});
}

void ContinuousBatchingEngine::preempt_last_running() {
  const uint64_t id = running_.back();
  running_.pop_back();
  Sequence& victim = sequences_.at(id);
  used_blocks_ -= victim.blocks;
  victim.blocks = 0;
  victim.computed_tokens = 0;  // recomputed from the start (prompt and output so far)
  waiting_.push_front(id);
  ++counters_.preemptions;
}

void ContinuousBatchingEngine::plan_running(int32_t& budget, BatchShape& shape) {
  size_t index = 0;
  while (index < running_.size() && budget > 0) {
    const uint64_t id = running_[index];
    Sequence& sequence = sequences_.at(id);
    const int32_t tokens = std::min(known_tokens(sequence) - sequence.computed_tokens, budget);
    if (tokens <= 0) {
      ++index;
      continue;
    }
    const int64_t needed = blocks_for(sequence.computed_tokens + tokens) - sequence.blocks;
    bool preempted_itself = false;
    while (needed > free_blocks()) {
      // running_[index] is planned only once what comes after it has been preempted.
      if (running_.back() == id) {
        preempt_last_running();
        preempted_itself = true;
        break;
      }
      preempt_last_running();
    }
    if (preempted_itself) break;
    plan(sequence, tokens, shape);
    budget -= tokens;
    ++index;
  }
}

void ContinuousBatchingEngine::plan_waiting(int32_t& budget, BatchShape& shape) {
  const bool only_started = pause_mode_ == PauseMode::kWait;
  auto it = waiting_.begin();
  while (it != waiting_.end() && budget > 0 &&
         static_cast<int64_t>(running_.size()) < limits_.max_num_seqs) {
    Sequence& sequence = sequences_.at(*it);
    if (only_started && !sequence.started) {
      ++it;
      continue;
    }
    const int32_t tokens = std::min(known_tokens(sequence) - sequence.computed_tokens, budget);
    if (blocks_for(sequence.computed_tokens + tokens) - sequence.blocks > free_blocks()) break;
    sequence.started = true;
    running_.push_back(*it);
    it = waiting_.erase(it);
    plan(sequence, tokens, shape);
    budget -= tokens;
  }
}

std::optional<Duration> ContinuousBatchingEngine::begin_iteration() {
  if (in_flight_ || pause_mode_ == PauseMode::kKeep) return std::nullopt;
  plan_.clear();
  BatchShape shape;
  int32_t budget = limits_.max_num_batched_tokens;
  plan_running(budget, shape);
  // Paused in wait (or abort) mode: no new request starts; preempted ones may come back.
  if (!pause_mode_ || pause_mode_ == PauseMode::kWait) plan_waiting(budget, shape);
  if (plan_.empty()) return std::nullopt;
  in_flight_ = true;
  ++counters_.iterations;
  return cost_.iteration_time(shape);
}

std::vector<RequestUpdate> ContinuousBatchingEngine::end_iteration() {
  std::vector<RequestUpdate> updates;
  if (!in_flight_) return updates;
  in_flight_ = false;
  for (const Planned& planned : plan_) {
    const auto found = sequences_.find(planned.id);
    if (found == sequences_.end()) continue;  // aborted while the iteration ran
    Sequence& sequence = found->second;
    const int32_t prompt_left =
        std::max<int32_t>(0, sequence.request.prompt_tokens - sequence.computed_tokens);
    counters_.prompt_tokens += std::min(prompt_left, planned.tokens);
    sequence.computed_tokens += planned.tokens;
    if (sequence.computed_tokens < known_tokens(sequence)) continue;  // a prefill chunk
    ++sequence.output_tokens;
    ++counters_.generation_tokens;
    if (sequence.output_tokens >= sequence.request.max_tokens) {
      updates.push_back(finish(sequence, FinishReason::kLength, 1));
    } else if (sequence.output_tokens >= sequence.request.stop_after_tokens) {
      updates.push_back(finish(sequence, FinishReason::kStop, 1));
    } else {
      RequestUpdate update;
      update.id = planned.id;
      update.new_tokens = 1;
      update.output_tokens = sequence.output_tokens;
      update.first_token = sequence.output_tokens == 1;
      update.prompt_tokens = sequence.request.prompt_tokens;
      updates.push_back(update);
    }
  }
  plan_.clear();
  return updates;
}

std::vector<RequestUpdate> ContinuousBatchingEngine::pause(PauseMode mode) {
  pause_mode_ = mode;
  std::vector<RequestUpdate> updates;
  if (mode != PauseMode::kAbort) return updates;
  std::vector<uint64_t> ids(running_.begin(), running_.end());
  ids.insert(ids.end(), waiting_.begin(), waiting_.end());
  for (const uint64_t id : ids) {
    if (auto update = abort(id)) updates.push_back(*update);
  }
  return updates;
}

void ContinuousBatchingEngine::resume() {
  pause_mode_.reset();
}

bool ContinuousBatchingEngine::pause_complete() const {
  if (!pause_mode_ || in_flight_) return false;
  if (*pause_mode_ != PauseMode::kWait) return true;
  if (!running_.empty()) return false;
  return std::none_of(waiting_.begin(), waiting_.end(),
                      [this](uint64_t id) { return sequences_.at(id).started; });
}

}  // namespace gangway
