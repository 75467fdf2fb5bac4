#include "workload/rng.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace gangway {

namespace portable {
namespace {

// ln 2 split so that k * kLn2Hi is exact for every |k| < 2^20 (the low 21 bits of kLn2Hi are zero).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;
constexpr double kSqrtHalf = 0.70710678118654752440;

// 2 / (2k + 1) for k = 1..12: the series of 2 atanh(s) / s - 2 in z = s^2.
constexpr std::array<double, 12> kAtanhSeries = {
    2.0 / 3,  2.0 / 5,  2.0 / 7,  2.0 / 9,  2.0 / 11, 2.0 / 13,
    2.0 / 15, 2.0 / 17, 2.0 / 19, 2.0 / 21, 2.0 / 23, 2.0 / 25,
};

constexpr double inverse_factorial(int n) {
  double factorial = 1.0;  // exact for n <= 18
  for (int i = 2; i <= n; ++i) factorial *= i;
  return 1.0 / factorial;
}
// 1/n! for n = 2..14: the Taylor series of exp(r) - 1 - r.
constexpr std::array<double, 13> kExpSeries = {
    inverse_factorial(2),  inverse_factorial(3),  inverse_factorial(4),  inverse_factorial(5),
    inverse_factorial(6),  inverse_factorial(7),  inverse_factorial(8),  inverse_factorial(9),
    inverse_factorial(10), inverse_factorial(11), inverse_factorial(12), inverse_factorial(13),
    inverse_factorial(14),
};

}  // namespace

// x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log(m) = log(1+f) = 2 atanh(s), s = f / (2 + f),
// |s| < 0.1716, evaluated in the fdlibm arrangement that keeps the leading terms exact.
double log(double x) {
  if (std::isnan(x) || x < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return -std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return x;
  int exponent = 0;
  double m = std::frexp(x, &exponent);  // exact; m in [0.5, 1)
  if (m < kSqrtHalf) {
    m *= 2.0;
    --exponent;
  }
  const double f = m - 1.0;  // exact (Sterbenz)
  const double s = f / (2.0 + f);
  const double z = s * s;
  double series = 0.0;
  for (auto it = kAtanhSeries.rbegin(); it != kAtanhSeries.rend(); ++it) series = series * z + *it;
  series *= z;
  const double half_f_squared = 0.5 * f * f;
  const double e = exponent;
  return e * kLn2Hi - ((half_f_squared - (s * (half_f_squared + series) + e * kLn2Lo)) - f);
}

// x = k ln2 + r with |r| <= ln2 / 2; exp(x) = 2^k exp(r), exp(r) by its Taylor series.
double exp(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.782712893383973096) return std::numeric_limits<double>::infinity();
  if (x < -745.13321910194110842) return 0.0;
  const double k = std::floor(x * kInvLn2 + 0.5);
  const double hi = x - k * kLn2Hi;  // exact
  const double lo = k * kLn2Lo;
  const double r = hi - lo;
  double series = 0.0;
  for (auto it = kExpSeries.rbegin(); it != kExpSeries.rend(); ++it) series = series * r + *it;
  const double tail = r * r * series;  // exp(r) - 1 - r
  const double exp_r = 1.0 + (hi - (lo - tail));
  return std::ldexp(exp_r, static_cast<int>(k));
}

double pow(double base, double exponent) {
  if (exponent == 0.0) return 1.0;
  return exp(exponent * log(base));
}

}  // namespace portable

uint64_t hash_string(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return mix64(hash);
}

Rng::Rng(uint64_t seed) {
  // splitmix64: consecutive outputs of a Weyl sequence through the finaliser. mix64 is a
  // bijection, so the four words are distinct and the state is never all zero.
  uint64_t weyl = seed;
  for (uint64_t& word : state_) {
    weyl += 0x9e3779b97f4a7c15ULL;
    word = mix64(weyl);
  }
}

Rng Rng::for_stream(uint64_t seed, uint64_t stream) {
  return Rng(mix_pair(seed, stream));
}

Rng Rng::for_stream(uint64_t seed, uint64_t stream, uint64_t substream) {
  return Rng(mix_pair(mix_pair(seed, stream), substream));
}

namespace {
constexpr uint64_t rotate_left(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}
}  // namespace

uint64_t Rng::next_u64() {
  const uint64_t result = rotate_left(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotate_left(state_[3], 45);
  return result;
}

double Rng::uniform01() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

double Rng::uniform_open01() {
  return static_cast<double>((next_u64() >> 11) + 1) * 0x1.0p-53;
}

uint64_t Rng::uniform_int(uint64_t n) {
  if (n == 0) throw std::invalid_argument("Rng::uniform_int: n must be positive");
  // Reject the lowest 2^64 mod n values so that what is left is a whole number of copies of
  // 0..n-1.
  const uint64_t threshold = (0 - n) % n;
  for (;;) {
    const uint64_t r = next_u64();
    if (r >= threshold) return r % n;
  }
}

double Rng::exponential(double rate) {
  return -portable::log(uniform_open01()) / rate;
}

double Rng::normal() {
  for (;;) {
    const double u = 2.0 * uniform01() - 1.0;
    const double v = 2.0 * uniform01() - 1.0;
    const double s = u * u + v * v;
    if (s > 0.0 && s < 1.0) return u * std::sqrt(-2.0 * portable::log(s) / s);
  }
}

double Rng::gamma(double shape, double scale) {
  if (!(shape > 0.0) || !(scale > 0.0)) {
    throw std::invalid_argument("Rng::gamma: shape and scale must be positive");
  }
  if (shape < 1.0) {
    const double boosted = gamma(shape + 1.0, 1.0);
    return scale * boosted * portable::pow(uniform_open01(), 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0.0;
    double v = 0.0;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform_open01();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return scale * d * v;
    if (portable::log(u) < 0.5 * x2 + d * (1.0 - v + portable::log(v))) return scale * d * v;
  }
}

double Rng::lognormal(double mu, double sigma) {
  return portable::exp(mu + sigma * normal());
}

ZipfSampler::ZipfSampler(int64_t n, double s) {
  if (n < 1) throw std::invalid_argument("ZipfSampler: n must be at least 1");
  if (!(s >= 0.0) || !std::isfinite(s)) {
    throw std::invalid_argument("ZipfSampler: s must be finite and >= 0");
  }
  cdf_.resize(static_cast<size_t>(n));
  double total = 0.0;
  for (int64_t k = 0; k < n; ++k) {
    total += portable::pow(static_cast<double>(k + 1), -s);
    cdf_[static_cast<size_t>(k)] = total;
  }
  for (double& c : cdf_) c /= total;
  cdf_.back() = 1.0;
}

int64_t ZipfSampler::sample(Rng& rng) const {
  const double u = rng.uniform01();
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  const auto rank = static_cast<int64_t>(it - cdf_.begin());
  return std::min(rank, size() - 1);
}

double ZipfSampler::probability(int64_t rank) const {
  if (rank < 0 || rank >= size()) return 0.0;
  const auto i = static_cast<size_t>(rank);
  return i == 0 ? cdf_[0] : cdf_[i] - cdf_[i - 1];
}

}  // namespace gangway
