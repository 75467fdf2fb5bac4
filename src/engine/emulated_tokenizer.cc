#include "engine/emulated_tokenizer.h"

#include <array>
#include <cstring>

#include "core/mix64.h"

namespace gangway {
namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

// Hash of one block's bytes (a multiple of 8 bytes long), chained to the previous block's hash.
uint64_t hash_block(const char* bytes, size_t size, uint64_t previous) {
  uint64_t h = mix64(previous ^ kGolden) ^ size;
  for (size_t i = 0; i + 8 <= size; i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, bytes + i, 8);
    h = (h ^ word) * kGolden;
    h ^= h >> 29;
  }
  return mix64(h);
}

// 32 symbols: 5 random bits each, 12 per 64-bit draw.
constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz 01234";

void append_random_text(uint64_t seed, size_t bytes, std::string& out) {
  uint64_t state = seed;
  size_t written = 0;
  while (written < bytes) {
    state += kGolden;
    uint64_t bits = mix64(state);
    for (int k = 0; k < 12 && written < bytes; ++k, ++written) {
      out.push_back(kAlphabet[bits & 31]);
      bits >>= 5;
    }
  }
}

constexpr std::array<std::string_view, 16> kTokenWords = {
    " the", " gpu", " and", " kv ", " of ", " a  ", " gan", "g is",
    " on ", " it ", " to ", " run", " tok", "ens ", " now", ". Ok"};

}  // namespace

void append_emulated_block_hashes(std::string_view text, int32_t block_tokens,
                                  std::vector<BlockHash>& out) {
  const size_t block_bytes = static_cast<size_t>(block_tokens) * kEmulatedBytesPerToken;
  uint64_t previous = 0;
  for (size_t start = 0; start + block_bytes <= text.size(); start += block_bytes) {
    previous = hash_block(text.data() + start, block_bytes, previous);
    out.push_back(previous);
  }
}

std::string synthesize_prompt_text(std::span<const BlockHash> prefix_blocks, int32_t tokens,
                                   uint64_t unique_salt, int32_t block_tokens) {
  std::string text;
  const size_t block_bytes = static_cast<size_t>(block_tokens) * kEmulatedBytesPerToken;
  const size_t total_bytes = static_cast<size_t>(tokens) * kEmulatedBytesPerToken;
  text.reserve(total_bytes);
  const size_t full_blocks = total_bytes / block_bytes;
  size_t block = 0;
  for (; block < full_blocks && block < prefix_blocks.size(); ++block) {
    append_random_text(prefix_blocks[block], block_bytes, text);
  }
  // The rest is this request's own: unique to the salt, position by position.
  uint64_t position = block;
  while (text.size() < total_bytes) {
    const size_t bytes = std::min(block_bytes, total_bytes - text.size());
    append_random_text(mix64(unique_salt * kGolden + position) ^ 0x5bd1e995ULL, bytes, text);
    ++position;
  }
  return text;
}

std::string_view emulated_token_text(int32_t index) {
  return kTokenWords[static_cast<size_t>(index) % kTokenWords.size()];
}

}  // namespace gangway
