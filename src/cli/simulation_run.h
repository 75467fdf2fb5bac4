// Runs one scenario under one gang policy and routing rule in the simulator and keeps what the
// reports need. This is where the wall clock is read (a driver's right): the simulation itself
// never does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "metrics/timeline_writer.h"
#include "sched/kv_statistics.h"
#include "sim/cluster_simulator.h"
#include "sim/simulator.h"
#include "workload/request_source.h"

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

// A request-level run's own account (the scenario's server.engines: engine processes that
// batch by themselves, sim/request_level_simulator.h).
struct EngineRunReport {
  std::string tier_mode;  // "lease" or "exclusive"
  int64_t engines = 0;
  int64_t tier_switches = 0;
  int64_t pauses = 0;
  int64_t resumes = 0;
  double switch_latency_ms = 0;  // the core's measured moving mean at the end
  double pause_latency_ms = 0;   // the engines' modelled call latencies
  double resume_latency_ms = 0;
};

// A cluster run's own account: per node, what it received and decided, and the spillover.
struct ClusterRunReport {
  ClusterSpec spec;
  std::vector<ClusterNodeResult> nodes;
  std::vector<AdmissionCounters> admission;  // per node
  std::vector<std::string> final_level;      // per node: the overload ladder's rung at the end
  SpilloverCounters spillover;
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
  // Cluster runs (the scenario's `cluster:`): per node and spillover; the blocks above (kv,
  // prediction, backfill, admission, ladder) are then node 0's.
  std::optional<ClusterRunReport> cluster;
  // Request-level runs: the engines' account (kv, prediction, backfill, admission and ladder are
  // the iteration-level scheduler's and stay empty).
  std::optional<EngineRunReport> engines = std::nullopt;
  uint64_t seed = 0;  // the scenario's seed this run used
};

// Simulates `scenario` under `policy`, routing small-model requests by `routing` (a
// router_registry name); writes the GPU timeline to `timeline` if given (single node only) and
// a time series with bins of `series_bin` if > 0. With `cluster:` in the scenario, runs the
// cluster (simulation_cluster.h); else with engine processes in `server.engines`, the
// request-level mode in front of them (simulation_engines.h).
PolicyRun run_policy(const Scenario& scenario, const PolicySpec& policy, const std::string& routing,
                     TimelineWriter* timeline, Duration series_bin = Duration(0));

// Pieces shared with the cluster run: the KV account of a scheduler; its reports (kv,
// prediction, backfill, admission, ladder) into `run`; the simulator's and scheduler's options.
KvRunReport kv_report(const SchedulerState& state);
void read_scheduler_report(const Scheduler& scheduler, PolicyRun& run);
SimulationOptions simulation_options(const Scenario& scenario, TimelineWriter* timeline,
                                     Duration series_bin);
SchedulerOptions run_scheduler_options(const Scenario& scenario, const std::string& routing);

}  // namespace gangway
