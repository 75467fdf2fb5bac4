// Prompt content as the KV cache sees it, and the chained block hashes made from it.
//
// Generated and replayed prompts have no real tokens, only structure: a sequence of segments,
// each a run of tokens of one piece of content (a group's system prompt, an earlier turn of a
// session, this request's own text, one block of a trace's hash_ids). A token is identified by
// its segment's content id and its offset inside the segment, so two prompts that start with the
// same segments hold the same tokens up to where they differ, and get the same hashes for every
// full KV block inside that common part and different hashes after it (as vLLM's and SGLang's
// prefix caches would see them).
//
// A block's hash identifies its tokens and every token before it. Hashes are chained at segment
// boundaries: a block inside one segment hashes (the hash of the block before its run of blocks
// inside that segment, its content id, its offset); a block that spans segments hashes (the
// previous block's hash, each piece's content id, offset and length). Either way equal hashes
// mean equal prefixes, and since the blocks of a run do not depend on each other they hash in
// parallel (about 1.5 ns a block; hashing is most of a generator's work). Only full blocks are
// hashed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/request.h"

namespace gangway {

struct ContentSegment {
  uint64_t content = 0;
  int32_t tokens = 0;
};

// Appends floor(total tokens / block_tokens) hashes to `out`. block_tokens > 0.
void append_block_hashes(std::span<const ContentSegment> segments, int32_t block_tokens,
                         std::vector<BlockHash>& out);

inline std::vector<BlockHash> block_hashes(std::span<const ContentSegment> segments,
                                           int32_t block_tokens) {
  std::vector<BlockHash> out;
  append_block_hashes(segments, block_tokens, out);
  return out;
}

}  // namespace gangway
