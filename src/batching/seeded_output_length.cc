#include "batching/seeded_output_length.h"

#include <algorithm>

#include "core/mix64.h"

namespace gangway {

int32_t SeededOutputLength::draw(uint64_t index, int32_t cap) const {
  const int32_t top = std::max<int32_t>(1, std::min(cap, kMaxDrawnTokens));
  const uint64_t value = mix64(mix64(seed_) ^ (index * 0x9e3779b97f4a7c15ULL));
  return 1 + static_cast<int32_t>(value % static_cast<uint64_t>(top));
}

}  // namespace gangway
