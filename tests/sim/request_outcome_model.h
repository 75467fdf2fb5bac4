// A reference model of request outcomes, independent of the scheduler: one small state machine
// per request, driven only by what a driver sees (submissions, client cancellations, iteration
// completions, finished records), and checked after every event of a simulation:
//
//   arrived --accepted--> live --cancel--> cancel requested --end--> ended
//      |                   |                                          ^
//      +--rejected (its record in the same event)--> ended <--end------+
//
// What it requires:
//  - every request that arrives ends exactly once, never before it arrived, and a request the
//    scheduler rejected at submission ends rejected, in that same event;
//  - a completed request has its first token, at least one and at most max_tokens output
//    tokens, and was never cancelled by its client;
//  - a request its client cancelled ends cancelled (client_cancelled), unless its GPU failed
//    (engine_failed) or the driver stopped first (driver_stopped); and it ends at once when it
//    was not in an iteration in flight, else no later than the end of that iteration (when its
//    engine next completes one).
// A broken rule is recorded with the request's id and the event's time; the run's test prints
// them (and stops collecting after a few).
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/simulation_observer.h"

namespace gangway {

class RequestOutcomeModel final : public SimulationObserver {
 public:
  void on_submitted(const WorkloadItem& item, const SubmitResult& result, Time now) override {
    Request& request = requests_[item.spec.id.value()];
    if (request.state != State::kUnknown) fail(item.spec.id, now, "arrived twice");
    request.state = result.accepted ? State::kLive : State::kRejectedAtSubmit;
    request.arrival = item.spec.arrival;
    request.max_tokens = item.spec.max_tokens;
    if (!result.accepted) must_end_now_.push_back(item.spec.id);
    ++arrived_;
  }

  void on_cancelled(RequestId id, std::optional<uint64_t> in_flight_engine, Time now) override {
    const auto it = requests_.find(id.value());
    if (it == requests_.end()) return fail(id, now, "cancelled before it arrived");
    Request& request = it->second;
    if (request.state != State::kLive) return fail(id, now, "cancelled when not live");
    request.state = State::kCancelRequested;
    request.cancelled_at = now;
    ++cancelled_;
    if (in_flight_engine) {
      waiting_for_engine_[id.value()] = *in_flight_engine;
    } else {
      must_end_now_.push_back(id);
    }
  }

  void on_iteration_done(uint64_t engine, Time now) override {
    for (auto it = waiting_for_engine_.begin(); it != waiting_for_engine_.end();) {
      if (it->second == engine) {
        must_end_now_.push_back(RequestId(it->first));
        it = waiting_for_engine_.erase(it);
      } else {
        ++it;
      }
    }
    (void)now;
  }

  void on_finished(const RequestRecord& record) override {
    const Time now = record.finished;
    const auto it = requests_.find(record.id.value());
    if (it == requests_.end()) return fail(record.id, now, "ended but never arrived");
    Request& request = it->second;
    if (request.state == State::kEnded) return fail(record.id, now, "ended twice");
    if (record.finished < request.arrival) fail(record.id, now, "ended before it arrived");
    if (request.state == State::kRejectedAtSubmit && record.outcome != Outcome::kRejected) {
      fail(record.id, now,
           std::string("rejected at submission but ended ") + to_string(record.outcome));
    }
    if (record.outcome == Outcome::kCompleted) {
      if (!record.first_token) fail(record.id, now, "completed without a first token");
      if (record.output_tokens < 1 || record.output_tokens > request.max_tokens) {
        fail(record.id, now,
             "completed with " + std::to_string(record.output_tokens) + " of max_tokens " +
                 std::to_string(request.max_tokens));
      }
    }
    if (request.state == State::kCancelRequested) {
      const bool allowed =
          (record.outcome == Outcome::kCancelled && record.reason == Reason::kClientCancelled) ||
          (record.outcome == Outcome::kFailed && record.reason == Reason::kEngineFailed) ||
          (record.outcome == Outcome::kCancelled && record.reason == Reason::kDriverStopped);
      if (!allowed) {
        fail(record.id, now,
             std::string("cancelled by its client but ended ") + to_string(record.outcome) + " " +
                 to_string(record.reason));
      }
      if (record.finished < request.cancelled_at) fail(record.id, now, "ended before its cancel");
    } else if (record.reason == Reason::kClientCancelled) {
      fail(record.id, now, "client_cancelled without a cancel");
    }
    request.state = State::kEnded;
    waiting_for_engine_.erase(record.id.value());
    ++ended_;
  }

  void after_event(Time now) override {
    for (const RequestId id : must_end_now_) {
      if (requests_[id.value()].state != State::kEnded) {
        fail(id, now,
             requests_[id.value()].state == State::kCancelRequested
                 ? "still live after its cancel took effect"
                 : "rejected at submission without a record");
      }
    }
    must_end_now_.clear();
  }

  // After the run: every request that arrived ended.
  void check_all_ended(Time now) {
    for (const auto& [id, request] : requests_) {
      if (request.state != State::kEnded) fail(RequestId(id), now, "never ended");
    }
  }

  const std::vector<std::string>& failures() const { return failures_; }
  int64_t arrived() const { return arrived_; }
  int64_t ended() const { return ended_; }
  int64_t cancelled() const { return cancelled_; }

 private:
  enum class State : uint8_t { kUnknown, kLive, kRejectedAtSubmit, kCancelRequested, kEnded };
  struct Request {
    State state = State::kUnknown;
    Time arrival;
    int32_t max_tokens = 0;
    Time cancelled_at;
  };

  void fail(RequestId id, Time now, const std::string& what) {
    if (failures_.size() >= 10) return;
    std::ostringstream line;
    line << "request " << id.value() << " at " << to_seconds(now) << " s: " << what;
    failures_.push_back(line.str());
  }

  std::unordered_map<uint64_t, Request> requests_;
  // Cancelled while in an iteration in flight: the engine whose next completion must end it.
  std::unordered_map<uint64_t, uint64_t> waiting_for_engine_;
  std::vector<RequestId> must_end_now_;
  std::vector<std::string> failures_;
  int64_t arrived_ = 0;
  int64_t ended_ = 0;
  int64_t cancelled_ = 0;
};

}  // namespace gangway
