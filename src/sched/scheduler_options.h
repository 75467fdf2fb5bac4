// The scheduler core's options (the scenario's `scheduler:` and `admission:` sections,
// docs/scenario.md): KV memory and its split, prefix caches, preemption, routing.
#pragma once

#include <cstdint>
#include <string>

#include "core/time.h"
#include "sched/admission/admission_options.h"

namespace gangway {

// How each GPU's KV memory is divided between the large model's pool and the small models'.
enum class KvSplit : uint8_t {
  kStatic,   // large_kv_fraction, fixed for the run
  kDynamic,  // starts at large_kv_fraction; moves between the bounds toward the tier whose
             // admissions are blocked by memory (docs/kv-and-routing.md)
};

// How a resident sequence that must yield is taken off: by predicted cost (the product), or one
// mode forced for experiments (falling back pause -> swap -> recompute where it is impossible).
enum class PreemptionPolicy : uint8_t { kCost, kPause, kSwap, kRecompute };

struct SchedulerOptions {
  // Share of each GPU's KV memory reserved for the large model's shard (the static split, and
  // the dynamic split's starting point).
  double large_kv_fraction = 0.5;
  // Fraction of a KV pool kept free when admitting a new sequence, so that running sequences can
  // grow a while before anyone must be preempted (vLLM's watermark).
  double kv_admission_watermark = 0.01;
  // Output length assumed before any request of a model has completed.
  double prior_mean_output_tokens = 128;
  // Predict from RequestSpec::oracle_output_tokens (experiments' perfect-knowledge reference).
  bool oracle_predictor = false;

  // KV memory, prefix caches and routing (docs/kv-and-routing.md).
  KvSplit kv_split = KvSplit::kStatic;
  // Bounds of the dynamic split, and how much of each GPU's KV memory one move shifts.
  double large_kv_fraction_min = 0.2;
  double large_kv_fraction_max = 0.8;
  double kv_rebalance_step = 0.05;
  // Least time between two moves of the dynamic split.
  Duration kv_rebalance_interval = std::chrono::milliseconds(50);
  // Reuse KV of earlier requests' prompts (prefix caching) at all.
  bool prefix_caching = true;
  // Keep prefix blocks evicted from a GPU in host memory, for a hit to load over PCIe. Off by
  // default: it pays only where prompts come back after the GPUs' caches have turned over
  // (multi-turn chat with long think times, as in the Mooncake trace), and it costs a PCIe copy
  // per evicted block and host memory (docs/kv-and-routing.md).
  bool host_prefix_cache = false;
  // Large model: defer a queued request whose next uncached block a resident sequence is
  // computing right now, so that it hits that block instead of computing it a second time.
  bool lm_cache_aware_batching = true;
  PreemptionPolicy preemption = PreemptionPolicy::kCost;
  // Routing rule for small-model requests (sched/router_registry.h), used when the Scheduler is
  // built without a Router of its own.
  std::string routing = "predicted-ttft";
  // Requests arriving before this are left out of the KV statistics (a driver's warm-up).
  Time statistics_from;
  // Admission control, queue order and overload handling (docs/overload.md).
  AdmissionOptions admission;
};

}  // namespace gangway
