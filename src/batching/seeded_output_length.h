// How long the emulated model's answer is when a request leaves it to the model (no max_tokens):
// a real model stops at its end-of-sequence token, the test engine at a length drawn from the
// engine's seed and the request's arrival number, uniform in [1, min(cap, kMaxDrawnTokens)].
// The same seed and the same order of requests give the same lengths on every run.
#pragma once

#include <cstdint>

namespace gangway {

class SeededOutputLength {
 public:
  static constexpr int32_t kMaxDrawnTokens = 256;

  explicit SeededOutputLength(uint64_t seed) : seed_(seed) {}

  // The index-th request's length, at most cap (cap >= 1).
  int32_t draw(uint64_t index, int32_t cap) const;

 private:
  uint64_t seed_;
};

}  // namespace gangway
