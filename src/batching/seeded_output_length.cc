#include "batching/seeded_output_length.h"

#include <algorithm>

namespace gangway {
namespace {

// The splitmix64 finaliser: a bijective mixer, so neighbouring indices give unrelated lengths.
uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

int32_t SeededOutputLength::draw(uint64_t index, int32_t cap) const {
  const int32_t top = std::max<int32_t>(1, std::min(cap, kMaxDrawnTokens));
  const uint64_t value = mix(mix(seed_) ^ (index * 0x9e3779b97f4a7c15ULL));
  return 1 + static_cast<int32_t>(value % static_cast<uint64_t>(top));
}

}  // namespace gangway
