// What the node tells the cluster's router about its load, computed by the core from its own
// state so that the simulator and the server publish the same thing: per model and SLO class,
// how much is queued and running, how long a new request would wait, and how much more the node
// can take; plus the gang's state, so a router can steer small-model traffic away during a
// large-model reservation burst.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"
#include "sched/scheduler_state.h"

namespace gangway {

struct ClassLoad {
  std::string slo_class;
  int64_t queued = 0;
  int64_t running = 0;
};

struct ModelLoad {
  std::string model;
  std::string tier;
  int64_t queued = 0;
  int64_t running = 0;
  // Predicted queueing delay of a request arriving now (before its own prefill).
  double predicted_wait_ms = 0;
  // The same, counting only the queued work of classes with a TTFT target (all of it where no
  // class has one): what the node has promised first tokens for. Work without a target waits
  // behind every class that has one, so however long its queue, it delays no promise.
  double promised_wait_ms = 0;
  // Share of the model's KV pools in use.
  double kv_usage = 0;
  // How many more requests per second of the model's mean queued prompt the node could take
  // before a new request's predicted wait reaches the tightest TTFT target it serves (0 when
  // it already does): where a router should send more, and where less.
  double headroom_rps = 0;
  // Whether the node can run the model at all now (false: every engine it runs on is lost, and
  // its requests are rejected no_capacity).
  bool has_capacity = true;
  std::vector<ClassLoad> classes;
};

struct LoadReport {
  Time at;
  std::vector<ModelLoad> models;
  std::string gang_phase;  // off | pending | active
  // When the next (or current) gang phase started or is predicted to start, if any.
  std::optional<double> gang_since_s;
  // The next (pending) or current (active) large-model lease: when it starts or started and how
  // long it is expected to last (the smoothed length of recent phases), so that a router can
  // move small-model traffic away during it.
  std::optional<double> lease_start_s;
  double lease_expected_ms = 0;
  // The overload ladder (docs/overload.md).
  std::string overload_level;
  double overload_pressure = 0;
  // The ladder's weight shift: the factor on the large model's arbiter weight (1: configured).
  double large_weight_factor = 1.0;
  // The tightest TTFT target the node serves, which headroom and the ladder's pressure are
  // measured against.
  double ttft_target_ms = 0;
  int64_t live_requests = 0;
};

// The tightest TTFT target of the node's classes (0.2 s when none has one): headroom and
// pressure are measured against it.
double tightest_ttft_target_s(const NodeSpec& node);

// Computes the report. O(models x classes + GPUs): cheap enough to publish every second.
LoadReport compute_load_report(const SchedulerState& state, Time now);
nlohmann::json to_json(const LoadReport& report);

}  // namespace gangway
