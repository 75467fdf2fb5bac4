// What the KV layer did during a run, for reports and experiments: prefix-cache hits per pool
// (each GPU's replica of a small model, and the large model's pool), the preemption choices made
// and what they were predicted to cost, and the dynamic split's moves. Plain counters kept by
// the Scheduler as it decides; constant memory.
//
// Hit rates count each request once, at its first admission (a request recomputed after a
// preemption that hits its own blocks is not a prefix hit), and only requests that arrived at
// or after SchedulerOptions::statistics_from (the simulator's warm-up is left out).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace gangway {

struct PrefixCacheCounters {
  int64_t requests = 0;       // first admissions counted
  int64_t hit_requests = 0;   // ... that reused at least one cached block
  int64_t prompt_tokens = 0;  // their prompt tokens
  int64_t cached_tokens = 0;  // prompt tokens reused (GPU and host tiers)
  int64_t host_tokens = 0;    // ... of which loaded from the host tier

  double token_hit_rate() const {
    return prompt_tokens == 0 ? 0.0 : static_cast<double>(cached_tokens) / prompt_tokens;
  }
  double request_hit_rate() const {
    return requests == 0 ? 0.0 : static_cast<double>(hit_requests) / requests;
  }
  void add(const PrefixCacheCounters& other) {
    requests += other.requests;
    hit_requests += other.hit_requests;
    prompt_tokens += other.prompt_tokens;
    cached_tokens += other.cached_tokens;
    host_tokens += other.host_tokens;
  }
};

// How a resident sequence gets out of the way (docs/kv-and-routing.md, "Preemption by cost").
enum class PreemptionMode : uint8_t {
  kPause,      // keep its KV in place, just do not schedule it (free if the memory is not needed)
  kSwap,       // copy its KV to host memory and back later (2 x KV bytes over PCIe)
  kRecompute,  // drop its KV and prefill it again later (cheaper when its prompt stays cached)
};
inline constexpr int kPreemptionModes = 3;
const char* to_string(PreemptionMode mode);

// Why a sequence had to yield.
enum class PreemptionReason : uint8_t {
  kMemory,    // its pool ran out of blocks for running sequences' next tokens
  kGang,      // the gang took the GPUs (a lease started, or an exclusive-mode drain)
  kSplit,     // the dynamic split gave its memory to the other tier
  kPriority,  // an arrival of the most important class needed its slot or memory
};
inline constexpr int kPreemptionReasons = 4;
const char* to_string(PreemptionReason reason);

struct PreemptionCounters {
  int64_t count = 0;
  int64_t kv_tokens = 0;      // KV tokens the victims held
  double victim_delay_s = 0;  // predicted extra delay to the victims
  double node_gpu_s = 0;      // predicted GPU-seconds the node spends on it (recompute)
};

struct KvStatistics {
  // Indexed by pool id: the replicas' pools (SchedulerState::replicas order), then the large
  // model's pool last.
  std::vector<PrefixCacheCounters> pools;
  // [model id][mode] and [reason][mode].
  std::vector<std::array<PreemptionCounters, kPreemptionModes>> preemptions_by_model;
  std::array<std::array<int64_t, kPreemptionModes>, kPreemptionReasons> preemptions_by_reason{};
  // Dynamic split.
  int64_t split_moves_to_large = 0;
  int64_t split_moves_to_small = 0;
  double large_kv_fraction_lowest = 0;
  double large_kv_fraction_highest = 0;
  // Host tier high-water mark.
  int64_t host_peak_bytes = 0;
  // Requests an idle replica took from another replica's queue (work stealing).
  int64_t steals = 0;
};

}  // namespace gangway
