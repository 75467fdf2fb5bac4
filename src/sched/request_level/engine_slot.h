// One engine process as the request-level core sees it: what it serves and how much it holds at
// once (its descriptor, fixed), and where it stands now (its slot: healthy or failed, paused or
// running, the requests it runs and the KV tokens they may take).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/time.h"

namespace gangway {

// Index of an engine in the core's engine list (the order the driver gave them in).
using EngineIndex = uint16_t;

struct EngineDescriptor {
  ModelId model;
  bool large = false;
  // GPUs it runs on: one for a small-model replica, the gang for the large model.
  std::vector<GpuId> gpus;
  // Tokens of KV it holds (from gangway's KV layout for the memory share it was given) and
  // sequences it batches at most: the core never sends it more than fits in both.
  int64_t kv_capacity_tokens = 0;
  int32_t max_num_seqs = 0;
  // Whether it can hold its requests with KV kept (vLLM's /pause, SGLang's /pause_generation).
  bool pausable = false;
};

// Where an engine's pause stands. kPausing and kResuming: the call is out, its answer not in.
enum class EnginePause : uint8_t { kRunning, kPausing, kPaused, kResuming };

const char* to_string(EnginePause pause);

struct EngineSlot {
  EngineDescriptor descriptor;
  bool healthy = true;
  EnginePause pause = EnginePause::kRunning;
  // When the pending pause or resume call was asked for (its latency is measured from here).
  Time control_asked;
  // Requests dispatched to it and not ended, and the KV tokens they may take.
  std::vector<RequestId> running;
  int64_t reserved_tokens = 0;
  // Completed pause and resume calls, for reports.
  int64_t pauses = 0;
  int64_t resumes = 0;

  // Whether a request may be sent to it now, before capacity: healthy and not held.
  bool takes_work() const { return healthy && pause == EnginePause::kRunning; }
  // Whether `tokens` more fit: a request larger than the whole capacity still goes to an
  // engine with nothing running (the engine itself then decides).
  bool fits(int64_t tokens) const {
    if (static_cast<int64_t>(running.size()) >= descriptor.max_num_seqs) return false;
    return running.empty() || reserved_tokens + tokens <= descriptor.kv_capacity_tokens;
  }
};

}  // namespace gangway
