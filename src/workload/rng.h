// Deterministic random numbers for the simulator and its workload generators.
//
// A run must replay bit for bit from its seed on any platform and standard library. So nothing
// here uses std::random_device (not reproducible) or the std:: distributions (each standard
// library implements them differently), and the log/exp the distributions need are our own code
// built from IEEE-754 +, -, *, / and exact scaling, which round identically everywhere, instead
// of the platform's libm (whose last bits differ between implementations). The compiler must not
// fuse a*b+c into one FMA for this to hold on FMA targets: build with -ffp-contract=off.
//
// Generator: xoshiro256** (Blackman and Vigna), seeded through splitmix64. Independent streams
// come from hashing (seed, stream) into the seed, so a stream's numbers never depend on how many
// other streams exist or how much they drew.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/mix64.h"

namespace gangway {

// Elementary functions with results that depend only on IEEE-754 arithmetic (about 1 ulp).
namespace portable {
double log(double x);
double exp(double x);
// base > 0; computed as exp(exponent * log(base)).
double pow(double base, double exponent);
}  // namespace portable

// Hash of an ordered pair. For a fixed `a` it is a bijection of `b` (and the other way round), so
// two different values under the same parent never collide.
inline constexpr uint64_t mix_pair(uint64_t a, uint64_t b) {
  return mix64(mix64(a) ^ (b * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL));
}

// A stable 64-bit hash of a string (FNV-1a, then mixed), for names that key content.
uint64_t hash_string(std::string_view text);

class Rng {
 public:
  explicit Rng(uint64_t seed);
  // Stream `stream` of `seed`: statistically independent of every other (seed, stream).
  static Rng for_stream(uint64_t seed, uint64_t stream);
  // A sub-stream for one purpose inside a stream (arrivals, lengths, ...), so that drawing more
  // for one purpose does not shift the numbers of another.
  static Rng for_stream(uint64_t seed, uint64_t stream, uint64_t substream);

  uint64_t next_u64();
  // Uniform on [0, 1) with 53 random bits.
  double uniform01();
  // Uniform on (0, 1]: safe to take the log of.
  double uniform_open01();
  // Uniform on {0, ..., n-1}, without modulo bias. n > 0.
  uint64_t uniform_int(uint64_t n);
  bool bernoulli(double probability) { return uniform01() < probability; }
  // Exponential with the given rate (mean 1/rate). rate > 0.
  double exponential(double rate);
  // Standard normal (Marsaglia's polar method).
  double normal();
  // Gamma with the given shape and scale (mean shape*scale): Marsaglia and Tsang (2000), with
  // Gamma(a) = Gamma(a+1) * U^(1/a) for shape a < 1. shape > 0, scale > 0.
  double gamma(double shape, double scale);
  // exp(N(mu, sigma^2)).
  double lognormal(double mu, double sigma);

 private:
  std::array<uint64_t, 4> state_{};
};

// Zipf(s) over ranks 0..n-1: P(rank k) proportional to (k+1)^-s. The CDF is precomputed
// (8 bytes per rank; n up to a few million) and sampled by binary search.
class ZipfSampler {
 public:
  ZipfSampler(int64_t n, double s);
  int64_t sample(Rng& rng) const;
  double probability(int64_t rank) const;
  int64_t size() const { return static_cast<int64_t>(cdf_.size()); }

 private:
  std::vector<double> cdf_;
};

}  // namespace gangway
