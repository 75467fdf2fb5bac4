// Runs one scenario under one gang policy and routing rule in the simulator and keeps what the
// reports need. This is where the wall clock is read (a driver's right): the simulation itself
// never does.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "metrics/timeline_writer.h"
#include "sched/kv_statistics.h"
#include "sim/simulator.h"
#include "sim/workload/request_source.h"

namespace gangway {

// The KV layer's account of a run: prefix-cache hits per pool, preemption choices, the split.
struct KvRunReport {
  KvStatistics stats;
  // Per pool id (the replicas', then the large model's last): its GPU (none for the large
  // model's pool, which spans every GPU), model, capacity at the end, blocks evicted.
  struct Pool {
    std::optional<GpuId> gpu;
    ModelId model;
    int64_t capacity_blocks = 0;
    int64_t evicted_blocks = 0;
  };
  std::vector<Pool> pools;
  double large_kv_fraction = 0;  // at the end of the run
  int64_t host_capacity_bytes = 0;
  int64_t host_kept_blocks = 0;
  int64_t host_evicted_blocks = 0;
};

struct PolicyRun {
  PolicySpec policy;
  std::string mode;     // "lease" or "exclusive"
  std::string routing;  // the small models' routing rule
  SimulationResult result;
  KvRunReport kv;
  double wall_s = 0;
  // The output-length predictor's accuracy per model (indexed by ModelId value), whether it read
  // the true lengths (scheduler.oracle_output_lengths), and how backfill reservations held.
  std::vector<PredictionAccuracy> prediction;
  bool oracle_output_lengths = false;
  BackfillStats backfill;
  // Admission control: what it decided, and the overload ladder's history.
  bool admission_enabled = false;
  AdmissionCounters admission;
  OverloadLadder ladder;
};

// Simulates `scenario` under `policy`, routing small-model requests by `routing` (a
// router_registry name); writes the GPU timeline to `timeline` if given.
PolicyRun run_policy(const Scenario& scenario, const PolicySpec& policy, const std::string& routing,
                     TimelineWriter* timeline);

}  // namespace gangway
