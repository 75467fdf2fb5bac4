// What the scheduler asks an engine to run, and what the engine reports back. An engine is
// either one GPU running a small model's iteration or the whole gang running the large model's.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/ids.h"
#include "core/time.h"
#include "model/cost_model.h"
#include "sched/sequence.h"

namespace gangway {

struct EngineRef {
  bool gang = false;
  GpuId gpu;  // meaningful when !gang

  static EngineRef small(GpuId gpu) { return EngineRef{false, gpu}; }
  static EngineRef large() { return EngineRef{true, GpuId(0)}; }
  bool operator==(const EngineRef&) const = default;
};

// One sequence's part in an iteration.
struct BatchEntry {
  RequestId id;
  SequenceHandle handle = kNoSequence;
  // Prompt (or recompute) tokens computed this iteration; 0 for a decode step.
  int32_t prefill_tokens = 0;
  // KV tokens present before this iteration (what attention reads).
  int32_t context_tokens = 0;
  // Whether the iteration samples a token for this sequence (decode steps, and the prefill
  // chunk that completes the prompt), and the sequence's output length once it has.
  bool emits_token = false;
  int32_t output_tokens_after = 0;
};

// The cost model's view of a batch: prefill chunks and decode steps counted apart.
inline BatchShape shape_of(std::span<const BatchEntry> entries) {
  BatchShape shape;
  for (const BatchEntry& entry : entries) {
    if (entry.prefill_tokens > 0) {
      shape.prefill_tokens += entry.prefill_tokens;
      ++shape.prefill_seqs;
      shape.prefill_context_tokens += entry.context_tokens;
    } else {
      ++shape.decode_seqs;
      shape.decode_context_tokens += entry.context_tokens;
    }
  }
  return shape;
}

struct IterationLaunch {
  EngineRef engine;
  ModelId model;
  // Valid until the iteration's completion is reported to the scheduler.
  std::span<const BatchEntry> entries;
  BatchShape shape;
  // The scheduler's own prediction of its duration (the engine may take longer).
  Duration predicted;
  Time start;
};

}  // namespace gangway
