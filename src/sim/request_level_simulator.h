// The discrete-event simulator of the request-level mode (docs/engines.md): gangway in front of
// engine processes that batch by themselves. It drives the RequestLevelCore in virtual time with
// one ContinuousBatchingEngine model per engine process, each iteration timed by the cost model
// of its model on the node's hardware, and with the latency of the engines' pause and resume
// calls, so that `gangway simulate` predicts such a deployment (tier switches, waits in the
// core's queues and inside each engine's batch) and its policies can be compared before it runs.
//
// The engines carry out what the core asks as the real ones do: a dispatched request joins its
// engine's waiting queue; an abort ends it there; a pause (vLLM's keep mode) stops the engine
// from planning another iteration, and its answer comes back pause_latency after the iteration
// in flight ends; a resume takes effect, and is answered, resume_latency after it is asked. A
// request's first sampled token is its first token; it ends when its engine samples its last
// (the workload's output length, or max_tokens).
//
// Deterministic (virtual time, one ordered event list) and sans-I/O, like Simulator. Faults,
// client cancellations and the time series' node fields are the iteration-level simulator's
// only; the arrivals, the metrics and the node time account are the same.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "batching/continuous_batching_engine.h"
#include "core/node_spec.h"
#include "model/cost_model.h"
#include "sched/request_level/request_level_core.h"
#include "sim/arrival_feed.h"
#include "sim/event_queue.h"
#include "sim/measurement_window.h"
#include "sim/simulator.h"
#include "workload/request_source.h"

namespace gangway {

// How long an engine process takes to answer gangway's control calls, beyond what its batch
// makes it wait (a keep pause waits for the iteration in flight). The defaults are the test
// engine's resume call as measured over loopback (bench/README.md, "Test engine": p50 0.8 ms);
// a pause costs the same round trip once its iteration has ended.
struct EngineCallLatency {
  Duration pause = std::chrono::microseconds(800);
  Duration resume = std::chrono::microseconds(800);
};

struct RequestLevelSimulationSpec {
  // The engine processes, in the core's order (config/request_level_setup.h).
  std::vector<EngineDescriptor> engines;
  RequestLevelOptions core;
  EngineCallLatency calls;
};

class RequestLevelSimulator {
 public:
  // `source` is read lazily during run(); not owned. Uses options' duration, drain_limit,
  // warmup, timeline and series_bin.
  RequestLevelSimulator(const NodeSpec& node, RequestLevelSimulationSpec spec,
                        RequestSource& source, SimulationOptions options);
  ~RequestLevelSimulator();

  SimulationResult run();
  const RequestLevelCore& core() const { return core_; }
  // Pause and resume calls answered, over all engines.
  int64_t pauses() const;
  int64_t resumes() const;

 private:
  struct Engine {
    std::unique_ptr<ContinuousBatchingEngine> model;
    Time iteration_end;  // of the iteration in flight
  };

  void submit_next_arrival();
  void handle(const SimEvent& event);
  void carry_out_effects();
  void start_iteration(EngineIndex index);
  void end_iteration(EngineIndex index);
  void answer(EngineIndex index, bool resume);
  void arm_wakeup();
  // Each GPU's activity now, for the node time account.
  void observe_activities();

  const NodeSpec& node_;
  SimulationOptions options_;
  EngineCallLatency calls_;
  RequestLevelCore core_;
  ArrivalFeed arrivals_;
  EventQueue events_;
  std::vector<std::unique_ptr<CostModel>> costs_;  // by ModelId value
  std::vector<Engine> engines_;                    // by EngineIndex
  // What an engine needs of each request not yet dispatched: its prompt, max_tokens, and the
  // workload's output length (where the engine's model stops by itself).
  struct Pending {
    int32_t prompt_tokens = 0;
    int32_t max_tokens = 1;
    int32_t output_tokens = 1;
  };
  std::unordered_map<uint64_t, Pending> pending_;
  int64_t large_holds_ = 0;
  Time now_;
  Time armed_wakeup_ = Time::max();
  uint64_t wakeup_generation_ = 0;
  int64_t events_processed_ = 0;
  int64_t requests_ = 0;
  MeasurementWindow window_;
  std::vector<GpuActivity> activities_;
  RunMetrics metrics_;
  std::optional<TimeSeries> series_;
};

}  // namespace gangway
