// Predicts a small-model request's time to first token on each replica of its model, the
// quantity cache-aware routing minimises (docs/kv-and-routing.md, "Routing by predicted TTFT"):
//
//   TTFT(replica) = wait there + load of its host-cached blocks + prefill of what is not cached
//   wait          = rest of the iteration in flight + the gang's blackout (a lease in progress
//                   or pending) + the prefill work ahead of it (queued and resident prompt
//                   tokens not yet computed, at the replica's prefill rate)
//
// With hit fraction h and full prefill time P, a warm busy replica beats a cold idle one exactly
// when its extra wait is below P - P(uncached | cached) ~= h x P: docs/kv-and-routing.md derives
// it, and the router tests check that the rule picks the warm GPU exactly then.
//
// Cheap by construction (it runs for every replica on every arrival): prefix lookups are binary
// searches, prefill time takes at most four cost-model calls, the work ahead is kept as running
// token counts by the scheduler. Reads the state through a SchedulerView only.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/scheduler_view.h"

namespace gangway {

struct TtftEstimate {
  int32_t gpu_cached_tokens = 0;   // found in the replica's GPU prefix cache
  int32_t host_cached_tokens = 0;  // found after them in its host-tier blocks
  Duration wait{0};
  Duration load{0};
  Duration prefill{0};

  Duration total() const { return wait + load + prefill; }
  int32_t cached_tokens() const { return gpu_cached_tokens + host_cached_tokens; }
};

class TtftPredictor {
 public:
  // Reads per-model constants (prefill time per token) from the state's cost models.
  void initialise(const SchedulerView& state);
  bool initialised() const { return !seconds_per_prefill_token_.empty(); }

  // The reusable prefix of `seq` on `replica`, in blocks: on the GPU, then on the host tier.
  static void cached_blocks(const SchedulerView& state, const Replica& replica, const Sequence& seq,
                            int32_t& gpu_blocks, int32_t& host_blocks);
  // The tokens of `seq`'s remaining prompt that `replica`'s caches hold now (GPU and host
  // tier): what queueing it there counts as a cache hit rather than prefill work ahead.
  static int32_t cached_tokens(const SchedulerView& state, const Replica& replica,
                               const Sequence& seq);
  TtftEstimate estimate(const SchedulerView& state, const Replica& replica, const Sequence& seq,
                        Time now) const;
  // The request's own part on `replica` (cached lookup, load and prefill), without the wait.
  TtftEstimate own_part(const SchedulerView& state, const Replica& replica,
                        const Sequence& seq) const;
  // The same on a replica of `model` where cached_blocks() found `gpu_blocks` and `host_blocks`.
  TtftEstimate own_part(const SchedulerView& state, ModelId model, const Sequence& seq,
                        int32_t gpu_blocks, int32_t host_blocks) const;
  // How long `prefill_tokens_ahead` tokens of prefill work (plus the iteration in flight and
  // the gang's blackout) keep a newcomer waiting on `replica`.
  Duration wait(const SchedulerView& state, const Replica& replica, int64_t prefill_tokens_ahead,
                Time now) const;
  // Prefill of `new_tokens` on top of `cached_tokens`, in chunks, alone on the engine: exact for
  // up to four chunks, else the chunks' mean context (exact for costs affine in the context).
  Duration prefill_time(const SchedulerView& state, ModelId model, int32_t new_tokens,
                        int32_t cached_tokens) const;
  // Seconds of prefill per prompt token of `model` at a full chunk's rate, alone on its engine.
  double seconds_per_prefill_token(ModelId model) const {
    return seconds_per_prefill_token_[model.value()];
  }
  // How long the gang keeps small models off the GPUs from now: the rest of an active phase,
  // or a pending phase's barrier plus a typical phase; zero when the gang is off.
  Duration blackout(const SchedulerView& state, Time now) const;
  // The rest of the small-model iteration in flight on `gpu` (zero when none is).
  static Duration in_flight_rest(const GpuRuntime& gpu, Time now) {
    return gpu.small_busy && gpu.predicted_free > now ? gpu.predicted_free - now : Duration(0);
  }

 private:
  // prefill_time's last arguments and result. A request's own prefill is asked for on every
  // replica of its model, nearly always with the same arguments (no replica caches its prompt),
  // and cost models are immutable, so the answer is reused.
  struct PrefillTimeMemo {
    const CostModel* cost = nullptr;
    int32_t chunk_tokens = 0;
    int32_t new_tokens = 0;
    int32_t cached_tokens = 0;
    Duration time{0};
  };
  static Duration compute_prefill_time(const CostModel& cost, int32_t chunk, int32_t new_tokens,
                                       int32_t cached_tokens);

  std::vector<double> seconds_per_prefill_token_;  // by ModelId value: a full chunk, alone
  mutable PrefillTimeMemo last_prefill_;
};

}  // namespace gangway
