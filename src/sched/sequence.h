// One admitted request inside the scheduler: its spec plus where it is and how far it has got.
// Sequences live in a slab owned by the Scheduler and are named by a SequenceHandle, a small
// dense index that drivers may use to keep side tables (the simulator keeps true output lengths
// there) without a hash lookup per token. A handle is reused after its request ends.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/request.h"
#include "core/time.h"
#include "kv/block_pool.h"

namespace gangway {

using SequenceHandle = uint32_t;
inline constexpr SequenceHandle kNoSequence = std::numeric_limits<SequenceHandle>::max();
inline constexpr uint32_t kNoReplica = std::numeric_limits<uint32_t>::max();

enum class SequenceState : uint8_t {
  kQueued,    // waiting to be admitted to an engine's running set
  kRunning,   // resident on an engine (KV allocated), scheduled in its iterations
  kFinished,  // ended; the slot is free
};

// Cache-line aligned: the slab's elements then start on a line, so the hot block below and the
// request id after it share one line. Unaligned (272 bytes, a line and a quarter apart) three
// elements in four straddled two lines there; aligned (320 bytes) the iteration-done event
// simulated 16 % fewer L1 data misses (bench/README.md).
struct alignas(64) Sequence {
  // The fields every iteration reads or writes for each sequence in its batch (building the
  // batch, completing it) come first and together, so that those two per-sequence loops touch
  // few cache lines per sequence (bench/README.md: they were most of the L1 misses of an
  // iteration-done event). The rest follows in no particular order.
  SequenceState state = SequenceState::kFinished;
  bool large = false;  // belongs to the large (gang) model
  // Set while the sequence is part of an iteration in flight: it may not be moved or freed.
  bool in_flight = false;
  // Set when cancellation arrived while in flight; honoured when the iteration completes.
  bool cancel_pending = false;
  // The replica (index into SchedulerState::replicas) it runs on once admitted.
  uint32_t running_replica = kNoReplica;
  // Tokens whose KV exists on its engine (prefix hits, prefilled chunks, decoded tokens).
  int32_t kv_tokens = 0;
  // Tokens that must be in KV before it decodes: the prompt, or after a preemption that dropped
  // its KV, the prompt plus what it had generated (recomputed as one long prefill).
  int32_t prefill_target_tokens = 0;
  int32_t generated_tokens = 0;
  // The count of `blocks` below (kv_blocks == blocks.size()).
  int32_t kv_blocks = 0;
  // Its KV is being copied in from host memory (a host prefix hit or a swap-in) until then; it
  // is resident but takes no part in iterations before. While swapped: when the copy out ends.
  Time kv_ready;
  std::optional<Time> first_token;

  RequestSpec spec;
  // The GPU whose queue or running set holds it (small models only).
  std::optional<GpuId> gpu;
  // Replica whose queue holds it while queued, or kNoReplica for the model's shared queue.
  uint32_t queued_replica = kNoReplica;
  int32_t cached_prompt_tokens = 0;
  // KV blocks this sequence holds in its engine's pool, in token order (shared prompt blocks
  // first).
  std::vector<BlockId> blocks;
  // Leading prompt blocks published to the pool's prefix index (blocks[0, published_blocks)).
  int32_t published_blocks = 0;
  // Swapped out: the KV of kv_tokens tokens waits in host memory (no GPU blocks are held).
  bool swapped = false;
  // Exclusive mode: kept resident with its KV in place while the gang holds the GPUs.
  bool paused = false;
  // Prompt tokens found in the host tier at its first admission (a subset of
  // cached_prompt_tokens).
  int32_t host_cached_prompt_tokens = 0;
  std::optional<Time> first_scheduled;
  int32_t preemptions = 0;
  // What the predictor expected at admission: the output length and the finish time.
  double predicted_output_tokens = 0;
  Time predicted_finish;
  // Admission: the TTFT predicted at arrival (for calibration), and the class the request
  // named if admission moved it to another.
  std::optional<Duration> predicted_ttft;
  std::optional<SloClassId> downgraded_from;
  // Position in its queue's order (set when queued; smaller runs first).
  int64_t queue_key = 0;
  uint64_t queue_sequence = 0;
  // Prefill tokens it added to its queue's token count when queued.
  int32_t queue_tokens = 0;

  bool prefill_done() const { return kv_tokens >= prefill_target_tokens; }
  // Prompt (or recompute) tokens still to compute; 0 once decoding (kv_tokens grows past it).
  int32_t remaining_prefill_tokens() const {
    return kv_tokens >= prefill_target_tokens ? 0 : prefill_target_tokens - kv_tokens;
  }
  // How many leading prompt blocks could come from a prefix cache: its hashed blocks, but never
  // the whole prefill (the last token must be computed to sample from it).
  int32_t reusable_prefix_blocks(int32_t block_tokens) const {
    const auto hashed = static_cast<int32_t>(spec.prefix_blocks.size());
    const int32_t most = (prefill_target_tokens - 1) / block_tokens;
    return hashed < most ? hashed : most;
  }
};

}  // namespace gangway
