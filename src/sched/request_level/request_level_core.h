// The request-level scheduler core: gangway in front of engine processes that batch by
// themselves (vLLM, SGLang, any OpenAI-compatible server). It decides which engine receives
// which request and when, how many each engine holds (from its KV capacity), and which tier of
// engines holds the GPUs; the engines decide everything inside a batch.
//
// Like Scheduler, it is a deterministic state machine with no clock, threads or I/O: a driver
// feeds it events stamped with their time and carries out effects() (request_level_effects.h).
//
// Tiers share the GPUs in one of two modes:
//  - lease (every engine can pause): the tier that does not hold the GPUs has its engines paused
//    with their KV kept; a switch pauses the holder's engines, waits for every answer, then
//    resumes the other tier's. Requests running on a paused engine stay there and go on after
//    the resume.
//  - exclusive (some engine cannot pause): a switch stops dispatching to the holder's tier and
//    waits until its requests have ended; no request of one tier runs while the other's do.
// When to switch is TierLeasePlanner's answer. Within a tier, requests wait in one queue per
// model (least slack first or arrival order, as AdmissionOptions::queue_order says) and go to
// the healthy, running engine of their model with the fewest reserved KV tokens that has room
// (ties round robin).
//
// Every request that is submitted ends exactly once, with one RequestRecord in effects():
// completed or failed by its engine (on_end), cancelled by the client, failed when its engine
// fails (kEngineFailed), rejected at arrival (kQueueFull; kNoCapacity when no engine of its
// model is healthy) or dropped from its queue (kDeadlineExpired, kNoCapacity), or stopped.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/node_spec.h"
#include "core/outcome.h"
#include "core/request.h"
#include "sched/admission/admission_options.h"
#include "sched/request_level/engine_slot.h"
#include "sched/request_level/request_level_effects.h"
#include "sched/request_level/tier_lease_planner.h"

namespace gangway {

struct RequestLevelOptions {
  bool lease = true;  // lease mode; else exclusive
  TierLeaseOptions tiers;
  QueueOrder queue_order = QueueOrder::kSlack;
  Duration no_target_deadline = std::chrono::seconds(30);
  // Queued requests per model and class at most; more are rejected with kQueueFull.
  int64_t queue_cap = 2048;
};

class RequestLevelCore {
 public:
  RequestLevelCore(const NodeSpec& node, std::vector<EngineDescriptor> engines,
                   const RequestLevelOptions& options);

  // The driver starts: in lease mode the large model's engines are paused (the small tier holds
  // the GPUs first).
  void start(Time now);
  // A request arrived; false when it was rejected at once (its record is in effects()).
  bool submit(const RequestSpec& spec, Time now);
  // Its engine sent the first token / `tokens` tokens so far (the output length, not a delta).
  void on_first_token(RequestId id, Time now);
  void on_tokens(RequestId id, int32_t output_tokens, Time now);
  // Its engine ended it: completed, or failed (an error answer, garbage, a timeout: `reason`).
  void on_end(RequestId id, Outcome outcome, Reason reason, int32_t output_tokens, Time now);
  // The client went away.
  void cancel(RequestId id, Time now);
  // A pause or resume asked for in effects() answered.
  void on_engine_paused(EngineIndex index, Time now);
  void on_engine_resumed(EngineIndex index, Time now);
  // The engine stopped answering (connection refused or reset, a control call failed or timed
  // out, its health check failed), and came back.
  void on_engine_failed(EngineIndex index, Time now);
  void on_engine_recovered(EngineIndex index, Time now);
  void on_timer(Time now);
  // The driver stops: every live request ends with `reason`.
  void stop(Time now, Reason reason);

  RequestLevelEffects& effects() { return effects_; }
  // When to call on_timer() if nothing else happens (Time::max(): never).
  Time next_wakeup(Time now) const;

  size_t live_requests() const { return requests_.size(); }
  const std::vector<EngineSlot>& engines() const { return engines_; }
  EngineTier holder() const { return holder_; }
  bool switching() const { return switching_; }
  int64_t tier_switches() const { return tier_switches_; }
  Duration switch_latency() const { return planner_.switch_latency(); }
  int64_t queued(ModelId model) const;
  // Queued and dispatched (running on an engine, paused or not) requests of a model and class.
  int64_t queued(ModelId model, SloClassId slo_class) const {
    return class_queued_[model.value()][slo_class.value()];
  }
  int64_t running(ModelId model, SloClassId slo_class) const {
    return class_running_[model.value()][slo_class.value()];
  }
  // How long a completed request of the model held its engine (dispatch to end), a moving mean;
  // nullopt before the first.
  std::optional<Duration> mean_service(ModelId model) const {
    return service_observed_[model.value()] ? std::optional(mean_service_[model.value()])
                                            : std::nullopt;
  }
  // Since when the holder holds the GPUs (switching(): since when the switch runs).
  Time held_since() const { return held_since_; }
  Time switch_started() const { return switch_started_; }
  const TierLeasePlanner& planner() const { return planner_; }
  const RequestLevelOptions& options() const { return options_; }
  const NodeSpec& node() const { return node_; }
  // A tier's queued and running requests now.
  TierBacklog backlog(EngineTier tier) const;
  // The engine running `id`, if it has been dispatched.
  std::optional<EngineIndex> engine_of(RequestId id) const;

  // Throws std::logic_error naming the broken invariant; after every event in builds with
  // GANGWAY_CHECK_INVARIANTS.
  void check_invariants() const;

 private:
  struct LiveRequest {
    RequestSpec spec;
    int64_t queue_key = 0;
    int64_t reserved_tokens = 0;
    std::optional<EngineIndex> engine;
    std::optional<Time> dispatched;
    std::optional<Time> first_token;
    int32_t output_tokens = 0;
  };
  using Queue = std::multimap<std::pair<int64_t, uint64_t>, RequestId>;

  EngineTier tier_of(const EngineSlot& engine) const {
    return engine.descriptor.large ? EngineTier::kLarge : EngineTier::kSmall;
  }
  bool model_available(ModelId model) const;
  // A pause or resume call answered: an engine on its way (`from`) reaches `to`, and the
  // transition is counted in `count`; then the decision pass.
  void on_control_answered(EngineIndex index, EnginePause from, EnginePause to,
                           int64_t EngineSlot::*count, Time now);
  void decide(Time now);
  void plan_tiers(Time now);
  void begin_switch(Time now);
  void advance_switch(Time now);
  void dispatch(Time now);
  void expire_queued(Time now);
  void fail_queued_without_engine(Time now);
  void end(RequestId id, Outcome outcome, Reason reason, Time now);
  void observe_service(const LiveRequest& request, Time now);
  void after_event(Time now);
  int64_t queue_key(const RequestSpec& spec) const;

  const NodeSpec& node_;
  RequestLevelOptions options_;
  TierLeasePlanner planner_;
  std::vector<EngineSlot> engines_;
  std::unordered_map<uint64_t, LiveRequest> requests_;
  std::vector<Queue> queues_;                        // by ModelId value
  std::vector<size_t> rotation_;                     // by ModelId value: where ties start
  std::vector<std::vector<int64_t>> class_queued_;   // [model][class]
  std::vector<std::vector<int64_t>> class_running_;  // [model][class]
  std::vector<Duration> mean_service_;               // by ModelId value
  std::vector<bool> service_observed_;               // by ModelId value
  uint64_t queued_sequence_ = 0;
  EngineTier holder_ = EngineTier::kSmall;
  Time held_since_;
  bool switching_ = false;
  Time switch_started_;
  int64_t tier_switches_ = 0;
  Time next_tier_check_ = Time::max();
  RequestLevelEffects effects_;
};

}  // namespace gangway
