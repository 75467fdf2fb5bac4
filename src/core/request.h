// A request as the scheduler sees it at arrival: what the client asked for, never how long the
// answer will be (the engine finds that out; only an oracle policy in experiments may peek).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/time.h"

namespace gangway {

// Identifies the content of one full KV block (block_size tokens) together with everything
// before it, so equal hashes at equal positions mean a reusable prefix. Only full blocks are
// hashed: a trailing partial block is never shared.
using BlockHash = uint64_t;

struct RequestSpec {
  RequestId id;
  ModelId model;
  SloClassId slo_class;
  TenantId tenant;
  Time arrival;
  int32_t prompt_tokens = 0;
  // Upper bound on generated tokens; the engine may stop earlier (end of sequence).
  int32_t max_tokens = 0;
  // Optional absolute TTFT deadline that overrides the class target for this request.
  std::optional<Time> ttft_deadline;
  // Chained hashes of the prompt's full blocks, at the node's KV block size. May be empty
  // (no prefix information: nothing is reused).
  std::vector<BlockHash> prefix_blocks;
  // The true output length, known only to a simulator. Set only when an experiment runs an
  // oracle reference policy (perfect knowledge, to measure what prediction costs); the
  // scheduler's own policies never read it and servers never set it.
  std::optional<int32_t> oracle_output_tokens;
};

}  // namespace gangway
