// A pool of paged KV blocks for one model on one engine (a GPU for a small model, the gang for
// the large model), counted in blocks of the node's block size. Pure mechanism: who gets blocks
// and who gives them up is the scheduler's decision.
#pragma once

#include <cstdint>

namespace gangway {

class BlockPool {
 public:
  BlockPool() = default;
  explicit BlockPool(int64_t capacity_blocks) : capacity_blocks_(capacity_blocks) {}

  int64_t capacity_blocks() const { return capacity_blocks_; }
  int64_t used_blocks() const { return used_blocks_; }
  int64_t free_blocks() const { return capacity_blocks_ - used_blocks_; }
  double usage() const {
    return capacity_blocks_ == 0 ? 0.0 : static_cast<double>(used_blocks_) / capacity_blocks_;
  }

  // Takes n blocks if that many are free; false (and nothing taken) otherwise.
  bool allocate(int64_t n) {
    if (n > free_blocks()) return false;
    used_blocks_ += n;
    return true;
  }
  // REQUIRES: n <= used_blocks().
  void release(int64_t n) { used_blocks_ -= n; }

 private:
  int64_t capacity_blocks_ = 0;
  int64_t used_blocks_ = 0;
};

// Blocks needed to hold `tokens` tokens.
inline int64_t blocks_for_tokens(int64_t tokens, int32_t block_tokens) {
  return (tokens + block_tokens - 1) / block_tokens;
}

}  // namespace gangway
