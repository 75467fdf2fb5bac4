#include "workload/block_hash.h"

#include <algorithm>
#include <stdexcept>

#include "workload/rng.h"

namespace gangway {
namespace {
constexpr uint64_t kChainRoot = 0x6a09e667f3bcc908ULL;
constexpr uint64_t kSpanTag = 0xbb67ae8584caa73bULL;
// Odd multipliers: multiplying by them is a bijection of 64-bit words.
constexpr uint64_t kChainMultiplier = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kOffsetMultiplier = 0xd1b54a32d192ed03ULL;

// One mix64 per step (the hashing is most of a generator's work): for a fixed left operand each
// of these is a bijection of the right one, so different contents under one parent never collide.
inline uint64_t chain_step(uint64_t parent, uint64_t content) {
  return mix64((parent * kChainMultiplier) ^ content);
}
// Tokens [offset, offset + tokens) of `content`, as one word (a bijection of the position for
// a fixed content).
inline uint64_t piece_word(uint64_t content, int32_t offset, int32_t tokens) {
  const uint64_t where =
      (static_cast<uint64_t>(static_cast<uint32_t>(offset)) << 32) | static_cast<uint32_t>(tokens);
  return content + where * kOffsetMultiplier;
}
}  // namespace

void append_block_hashes(std::span<const ContentSegment> segments, int32_t block_tokens,
                         std::vector<BlockHash>& out) {
  if (block_tokens <= 0) throw std::invalid_argument("append_block_hashes: block_tokens <= 0");
  int64_t total = 0;
  for (const ContentSegment& segment : segments) total += std::max(segment.tokens, 0);
  const int64_t full_blocks = total / block_tokens;
  const size_t first = out.size();
  out.resize(first + static_cast<size_t>(full_blocks));

  size_t segment_index = 0;
  int32_t offset = 0;              // inside segments[segment_index]
  uint64_t previous = kChainRoot;  // hash of the block before this one
  for (int64_t block = 0; block < full_blocks; ++block) {
    while (segments[segment_index].tokens - offset <= 0) {
      ++segment_index;
      offset = 0;
    }
    const ContentSegment& current = segments[segment_index];
    if (current.tokens - offset >= block_tokens) {
      // The usual case: a run of blocks inside one segment. They depend only on the run's
      // anchor (the hash of the block before the run), not on each other, so they hash in
      // parallel: one mix64 each.
      const int64_t run =
          std::min<int64_t>((current.tokens - offset) / block_tokens, full_blocks - block);
      const uint64_t anchor = previous * kChainMultiplier;
      BlockHash* destination = out.data() + first + static_cast<size_t>(block);
      for (int64_t i = 0; i < run; ++i) {
        destination[i] = mix64(anchor ^ piece_word(current.content, offset, block_tokens));
        offset += block_tokens;
      }
      block += run - 1;
      previous = destination[run - 1];
      continue;
    }
    // The block spans segments: chain its pieces from the previous block's hash.
    uint64_t hash = previous;
    int32_t needed = block_tokens;
    while (needed > 0) {
      const ContentSegment& segment = segments[segment_index];
      const int32_t available = segment.tokens - offset;
      if (available <= 0) {
        ++segment_index;
        offset = 0;
        continue;
      }
      const int32_t take = std::min(needed, available);
      hash = chain_step(hash, piece_word(segment.content, offset, take));
      offset += take;
      needed -= take;
    }
    hash = mix64(hash ^ kSpanTag);
    out[first + static_cast<size_t>(block)] = hash;
    previous = hash;
  }
}

}  // namespace gangway
