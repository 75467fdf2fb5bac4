// Test support for the request-level core: the default node's engines and the tier options its
// tests run with, and a driver's answers to the core's pause and resume calls. Header-only (the
// *_for_tests.h suffix keeps the layering test from counting it).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "core/node_spec.h"
#include "sched/request_level/request_level_core.h"

namespace gangway {

// `small_replicas` engines of llama-3-8b (model 0), one on each of GPUs 0, 1, ..., then the
// engine of llama-3-70b (model 1) on all 8 GPUs; each holds `kv_capacity_tokens` of KV and
// `max_num_seqs` sequences.
inline std::vector<EngineDescriptor> small_replicas_and_large_engine(int small_replicas,
                                                                     int64_t kv_capacity_tokens,
                                                                     int32_t max_num_seqs,
                                                                     bool pausable) {
  std::vector<EngineDescriptor> engines;
  for (uint16_t g = 0; g < small_replicas; ++g) {
    engines.push_back({ModelId(0), false, {GpuId(g)}, kv_capacity_tokens, max_num_seqs, pausable});
  }
  std::vector<GpuId> all;
  for (uint16_t g = 0; g < 8; ++g) all.push_back(GpuId(g));
  engines.push_back({ModelId(1), true, all, kv_capacity_tokens, max_num_seqs, pausable});
  return engines;
}

// Queues in arrival order; the large tier holds the GPUs 100 ms, the small tier 300 ms, and a
// large request waits at most 1 s for them.
inline RequestLevelOptions arrival_order_tier_options(bool lease) {
  RequestLevelOptions options;
  options.lease = lease;
  options.queue_order = QueueOrder::kArrival;
  options.tiers.large_hold = std::chrono::milliseconds(100);
  options.tiers.small_hold = std::chrono::milliseconds(300);
  options.tiers.max_large_wait = std::chrono::milliseconds(1000);
  return options;
}

// Answers each pause and resume call of `controls` at `now`, as the engines' driver would.
inline void answer_controls(RequestLevelCore& core, const std::vector<EngineControl>& controls,
                            Time now) {
  for (const EngineControl& control : controls) {
    if (control.kind == EngineControl::Kind::kPause) {
      core.on_engine_paused(control.engine, now);
    } else {
      core.on_engine_resumed(control.engine, now);
    }
  }
}

}  // namespace gangway
