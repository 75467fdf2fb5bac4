// The emulated backend's stand-in for a tokenizer, and its inverse for the load generator.
//
// Why: the emulated GPUs have no model and no vocabulary, yet the scheduler needs what a real
// tokenizer gives it: a prompt's length in tokens and the chained hashes of its full KV blocks,
// so that prompts sharing a prefix share prefix_blocks and prefix caching and routing work on
// real prompts. The rule is deliberately trivial and documented (docs/server.md): a token is 4
// bytes of the prompt's UTF-8 text (the last one may be shorter), about what BPE tokenizers give
// for English, and a block is node.kv_block_tokens consecutive tokens. A block's hash covers its
// bytes and the hash of the block before it, so equal hashes at equal positions mean equal text
// up to the end of that block.
//
// synthesize_prompt_text() goes the other way for `gangway load`: from a workload request's
// prompt length and prefix block hashes it makes text that this tokenizer reads back as exactly
// that many tokens, with equal text blocks exactly where the workload's blocks are equal, so a
// load run gives the server the prefix structure a simulation of the same workload gives the
// scheduler. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/request.h"

namespace gangway {

inline constexpr int32_t kEmulatedBytesPerToken = 4;

// ceil(bytes / 4).
inline int64_t count_emulated_tokens(std::string_view text) {
  return (static_cast<int64_t>(text.size()) + kEmulatedBytesPerToken - 1) / kEmulatedBytesPerToken;
}

// Appends the chained hashes of the text's full blocks (block_tokens tokens = 4 * block_tokens
// bytes each) to `out`, the first block chained to nothing (the start of a prompt).
void append_emulated_block_hashes(std::string_view text, int32_t block_tokens,
                                  std::vector<BlockHash>& out);

// Text of exactly `tokens` tokens (4 * tokens bytes of [a-z0-9 ]). Full block i (i <
// prefix_blocks.size()) is a function of prefix_blocks[i] alone; everything after the blocks that
// prefix_blocks covers is a function of `unique_salt` and its position. block_tokens > 0.
std::string synthesize_prompt_text(std::span<const BlockHash> prefix_blocks, int32_t tokens,
                                   uint64_t unique_salt, int32_t block_tokens);

// The text of the emulated model's index-th generated token (0-based): always 4 bytes, so the
// answer's length in tokens reads back exactly through count_emulated_tokens().
std::string_view emulated_token_text(int32_t index);

}  // namespace gangway
