// The splitmix64 finaliser, the one 64-bit mixer of the project: seeds, hashes and per-request
// draws in every layer go through it, so a seed gives the same numbers wherever it is used.
#pragma once

#include <cstdint>

namespace gangway {

// A bijective 64-bit mixer with full avalanche: neighbouring inputs give unrelated outputs.
inline constexpr uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace gangway
