// Everything the scheduler knows about the node at an instant, as plain data. The Scheduler owns
// and mutates it; policies and routers read it through a const reference to make their
// decisions, and tests inspect it. It holds no clock: times in it are those of past events.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/node_spec.h"
#include "kv/block_pool.h"
#include "kv/host_kv_tier.h"
#include "model/cost_model.h"
#include "sched/admission/overload_ladder.h"
#include "sched/iteration.h"
#include "sched/kv_statistics.h"
#include "sched/output_length_predictor.h"
#include "sched/request_queue.h"
#include "sched/sequence.h"

namespace gangway {

// A replica of one small model on one GPU: its resident sequences, the requests routed to it,
// and its slice of the GPU's KV memory.
struct Replica {
  ModelId model;
  GpuId gpu;
  std::vector<SequenceHandle> running;  // in admission order
  // Exclusive mode: sequences kept resident (KV in place) while the gang holds the GPUs; they
  // rejoin `running` when the gang is done.
  std::vector<SequenceHandle> paused;
  RequestQueue queue;  // requests routed to this replica
  BlockPool kv;        // its slice of the GPU's KV memory, with this GPU's prefix cache
  // Prefill tokens still to compute of its resident sequences (work ahead of a newcomer).
  int64_t resident_prefill_tokens = 0;
  // Blocks the last admission that memory stopped was short of (0: none was); the dynamic
  // split reads it as this tier's memory pressure.
  int64_t kv_shortfall_blocks = 0;
};

struct GpuRuntime {
  GpuId id;
  bool failed = false;
  // Smoothed ratio of measured to predicted iteration time here (1: the cost model is right):
  // admission scales its predictions by it, so an engine that runs slow is not overbooked.
  double slowdown = 1.0;
  // An iteration is in flight on this GPU: a small-model one (small_busy) or the gang's.
  bool small_busy = false;
  Time busy_since;
  Time predicted_free;             // predicted end of the iteration in flight
  Duration last_iteration{0};      // predicted length of the last iteration launched here
  std::vector<uint32_t> replicas;  // indices into SchedulerState::replicas
  uint32_t next_replica = 0;       // round robin among this GPU's small models
  // The batch in flight (small model); its storage backs IterationLaunch::entries. Its shape,
  // as launched, goes with the iteration's completion.
  std::vector<BatchEntry> batch;
  BatchShape batch_shape;
  uint32_t batch_replica = 0;
  // Time this GPU was last handed to the gang, for barrier accounting.
  std::optional<Time> barrier_since;
};

struct SmallModelRuntime {
  ModelId model;
  std::vector<uint32_t> replicas;  // indices into SchedulerState::replicas
  RequestQueue queue;              // not yet bound to a replica (late binding)
  const CostModel* cost = nullptr;
};

enum class GangPhase : uint8_t {
  kOff,      // GPUs run small-model iterations
  kPending,  // a gang phase is wanted; GPUs are reaching their boundary (or draining)
  kActive,   // the gang holds every GPU and runs large-model iterations
};

struct LargeModelRuntime {
  ModelId model;
  RequestQueue queue;
  std::vector<SequenceHandle> running;  // resident on the gang (KV allocated)
  BlockPool kv;                         // one pool for the whole gang: each GPU holds a shard
  int64_t resident_prefill_tokens = 0;
  int64_t kv_shortfall_blocks = 0;
  bool busy = false;  // a large-model iteration is in flight
  Time busy_since;
  Time predicted_free;
  Duration last_iteration{0};
  std::vector<BatchEntry> batch;
  BatchShape batch_shape;  // as GpuRuntime::batch_shape
  const CostModel* cost = nullptr;
  double slowdown = 1.0;  // as GpuRuntime::slowdown, for the gang's iterations
  // Counts changes to what the gang's urgencies read: the queue, the resident set, a queued or
  // resident sequence's progress, and last_iteration. The scheduler bumps it on each (or more
  // often); a policy may reuse what it derived from them while it stays the same.
  uint64_t generation = 0;
};

struct GangRuntime {
  GangPhase phase = GangPhase::kOff;
  Time pending_since;
  Time active_since;
  // Whether the gang may still take new large requests in this phase (exclusive mode drains
  // without admitting once the policy wants the GPUs back).
  bool admitting = true;
  int64_t phases_started = 0;
  // Smoothed length of recent gang phases (active to released), to predict how long a phase in
  // progress will still keep small requests out (their TTFT blackout).
  Duration typical_phase{0};
  // The last release, and the smoothed share of time the gang holds the GPUs under contention:
  // admission stretches queued work by it (small models run only outside phases, the large
  // model only inside).
  Time last_released;
  double contended_share = 0;
};

// The overload ladder's state, mirrored here by the Scheduler for load reports.
struct OverloadState {
  OverloadLevel level = OverloadLevel::kNormal;
  double pressure = 0;
  // The last time admission turned an arrival away because the node was busy (its target could
  // not be met, its class was shed, its queue was full): load reports show no headroom for a
  // while after, since the queue alone looks short on a node that only queues what it can serve.
  std::optional<Time> last_busy_rejection;
  // The ladder's weight shift: the factor on the large model's weight in the gang arbiter
  // (1: the configured weights). Set by the Scheduler, read by the gangway policy.
  double large_weight_factor = 1.0;
};

// How well output lengths were predicted, per model: each completed request compares what was
// predicted when it was admitted with what happened. Streaming sums; constant memory.
struct PredictionAccuracy {
  int64_t samples = 0;
  double abs_error_tokens_sum = 0;
  double abs_error_seconds_sum = 0;
  double actual_tokens_sum = 0;

  double mean_abs_error_tokens() const { return samples ? abs_error_tokens_sum / samples : 0; }
  double mean_abs_error_seconds() const { return samples ? abs_error_seconds_sum / samples : 0; }
  double mean_actual_tokens() const { return samples ? actual_tokens_sum / samples : 0; }
};

struct SchedulerState {
  const NodeSpec* node = nullptr;
  std::vector<Sequence> sequences;  // slab indexed by SequenceHandle
  std::vector<GpuRuntime> gpus;
  std::vector<Replica> replicas;
  // Indexed by ModelId value; entries for the large model are unused.
  std::vector<SmallModelRuntime> small_models;
  std::optional<LargeModelRuntime> large;
  GangRuntime gang;
  OverloadState overload;
  int64_t live_sequences = 0;
  // Live request counts per model and SLO class ([model][class]), and queued prompt tokens per
  // model, kept up to date on every transition so that load reports cost O(models x classes).
  std::vector<std::vector<int64_t>> queued_by_class;
  std::vector<std::vector<int64_t>> running_by_class;
  std::vector<int64_t> queued_prompt_tokens;
  // Learns output lengths from completed requests; policies read it to predict.
  OutputLengthPredictor predictor{0, 1.0, false};
  std::vector<PredictionAccuracy> prediction_accuracy;  // indexed by ModelId value
  // Host memory: swap space and evicted-but-kept prefix blocks of every pool.
  HostKvTier host;
  // The share of each GPU's KV memory the large model's pool has now (moves under the dynamic
  // split), and each GPU's KV memory in bytes.
  double large_kv_fraction = 0;
  std::vector<int64_t> gpu_kv_bytes;
  KvStatistics kv_stats;

  const Sequence& sequence(SequenceHandle h) const { return sequences[h]; }
  bool has_large_work() const {
    return large && (!large->queue.empty() || !large->running.empty());
  }
  // The pool id of the large model's pool (replica pools are numbered by replica index).
  uint32_t large_pool_id() const { return static_cast<uint32_t>(replicas.size()); }
  // Small-model sequences resident and scheduled anywhere (exclusive mode drains these before a
  // gang; paused ones keep their KV but do not run).
  int64_t small_resident() const {
    int64_t n = 0;
    for (const Replica& r : replicas) n += static_cast<int64_t>(r.running.size());
    return n;
  }
  // Whether any iteration is in flight: the gang's, or a small model's on some GPU.
  bool any_engine_busy() const {
    if (large && large->busy) return true;
    for (const GpuRuntime& gpu : gpus) {
      if (gpu.small_busy) return true;
    }
    return false;
  }
  bool any_small_queued() const {
    for (const SmallModelRuntime& m : small_models) {
      if (!m.queue.empty()) return true;
    }
    for (const Replica& r : replicas) {
      if (!r.queue.empty()) return true;
    }
    return false;
  }
  // When a gang phase could start in lease mode: the end of the last small-model iteration in
  // flight (GPUs stop at their next boundary), or `now` if none is running.
  Time gang_barrier(Time now) const {
    Time barrier = now;
    for (const GpuRuntime& gpu : gpus) {
      if (gpu.small_busy && gpu.predicted_free > barrier) barrier = gpu.predicted_free;
    }
    return barrier;
  }
  // The smallest queue key among queued small-model requests (the queues' heads), if any: the
  // small request that goes first in the node's one order of every queue. Keys of different
  // queues compare (arrival times, or deadlines less predicted prefill under slack order), so the
  // request-level baselines keep their global order by comparing keys. (Comparing arrival times
  // under slack order, the gang waited for an older small request at the head of one queue while
  // the small request picked first, from another queue, waited for the gang: tests/regressions/.)
  std::optional<int64_t> smallest_small_queue_key() const;
  bool replica_has_queued_work(const Replica& replica) const {
    return !replica.queue.empty() || !small_models[replica.model.value()].queue.empty();
  }
  bool any_gpu_failed() const {
    for (const GpuRuntime& gpu : gpus) {
      if (gpu.failed) return true;
    }
    return false;
  }
  // Whether `model` can run at all: the gang needs every GPU, a small model one healthy replica.
  bool has_capacity(ModelId model) const;
  // The queue that holds queued `seq`: the large model's, its replica's, or its model's shared
  // queue.
  RequestQueue& queue_holding(const Sequence& seq) {
    if (seq.large) return large->queue;
    return seq.queued_replica != kNoReplica ? replicas[seq.queued_replica].queue
                                            : small_models[seq.spec.model.value()].queue;
  }
  // Keeps the per-class counters and queued prompt tokens in step with a sequence moving from
  // state `from` to `to` (kFinished stands for "counted nowhere").
  void count_transition(const Sequence& seq, SequenceState from, SequenceState to);
};

}  // namespace gangway
