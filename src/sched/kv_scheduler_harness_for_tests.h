// Test support for the scheduler's KV tests (kv_prefix_cache_test, kv_host_tier_test,
// kv_preemption_test, kv_dynamic_split_test): small nodes whose KV pool holds a given number of
// blocks, requests with content-chained prefix hashes, and running a scheduler until a request
// ends. Header-only (the *_for_tests.h suffix keeps the layering test from counting it).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sched/policy_registry.h"
#include "sched/scheduler.h"

namespace gangway {

inline constexpr int32_t kBlock = 16;

// Content-chained block hashes for a prompt made of segments (content id, blocks).
inline std::vector<BlockHash> hashes_of(const std::vector<std::pair<uint64_t, int>>& segments) {
  std::vector<BlockHash> out;
  uint64_t previous = 0x6a09e667f3bcc908ULL;
  for (const auto& [content, blocks] : segments) {
    for (int i = 0; i < blocks; ++i) {
      uint64_t x =
          previous * 0x9e3779b97f4a7c15ULL ^ (content * 1000003 + static_cast<uint64_t>(i));
      x ^= x >> 31;
      x *= 0xbf58476d1ce4e5b9ULL;
      previous = x ^ (x >> 29);
      out.push_back(previous);
    }
  }
  return out;
}

inline RequestSpec request(uint64_t id, ModelId model, int prompt, int max_tokens, Time arrival,
                           std::vector<BlockHash> prefix = {}) {
  RequestSpec spec;
  spec.id = RequestId(id);
  spec.model = model;
  spec.slo_class = SloClassId(2);  // batch: no deadlines in the way
  spec.arrival = arrival;
  spec.prompt_tokens = prompt;
  spec.max_tokens = max_tokens;
  spec.prefix_blocks = std::move(prefix);
  return spec;
}

// One GPU with only the small model; its KV pool holds exactly `blocks` blocks (the activation
// reserve takes the rest of HBM). Iterations take a constant 10 ms unless `roofline`.
inline NodeSpec small_node(int64_t blocks, bool roofline = false, int gpus = 1) {
  NodeSpec node = default_node_spec();
  node.gpu_count = gpus;
  node.models.pop_back();
  ModelSpec& model = node.models[0];
  model.gpus.clear();
  for (int g = 0; g < gpus; ++g) model.gpus.emplace_back(g);
  if (!roofline) {
    model.cost.kind = CostModelKind::kConstant;
    model.cost.constant_iteration_s = 0.010;
  }
  const int64_t block_bytes = model.kv_bytes_per_token_per_gpu() * node.kv_block_tokens;
  const auto weights = static_cast<int64_t>(std::llround(model.weight_bytes_per_gpu()));
  node.activation_reserve_bytes = node.hardware.hbm_bytes - weights - blocks * block_bytes;
  return node;
}

inline std::unique_ptr<Scheduler> make(const NodeSpec& node, SchedulerOptions options = {},
                                       const std::string& policy = "fcfs") {
  options.kv_admission_watermark = 0.0;
  PolicySpec spec;
  spec.name = policy;
  return std::make_unique<Scheduler>(node, options, make_policy(spec), nullptr);
}

// Completes GPU 0's iterations until `id` finishes; returns its record.
inline RequestRecord run_until_finished(Scheduler& scheduler, RequestId id, Time& now,
                                        Duration step = std::chrono::milliseconds(10)) {
  Effects& effects = scheduler.effects();
  for (int i = 0; i < 10000; ++i) {
    for (const RequestRecord& record : effects.finished) {
      if (record.id == id) {
        RequestRecord found = record;
        effects.clear();
        return found;
      }
    }
    effects.clear();
    now += step;
    if (scheduler.state().gpus[0].small_busy) {
      scheduler.on_iteration_done(EngineRef::small(GpuId(0)), {}, now);
    } else {
      scheduler.on_timer(now);
    }
  }
  ADD_FAILURE() << "request " << id.value() << " never finished";
  return RequestRecord{};
}

// The default node (the 8B model on every GPU and the 70B gang), every iteration 10 ms.
inline NodeSpec mixed_node() {
  NodeSpec node = default_node_spec();
  for (ModelSpec& model : node.models) {
    model.cost.kind = CostModelKind::kConstant;
    model.cost.constant_iteration_s = 0.010;
  }
  return node;
}

}  // namespace gangway
