// Virtual and wall time as the scheduler core sees it.
//
// The core never reads a clock: every event carries the time at which it happened, chosen by the
// driver (the simulator's virtual clock or the server's wall clock). Time is an integer count of
// nanoseconds since the driver's epoch so that arithmetic is exact and runs replay bit for bit;
// floating-point seconds appear only at the edges (cost model outputs, reports).
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

namespace gangway {

using Duration = std::chrono::nanoseconds;

// A point on the driver's timeline. A plain value type rather than std::chrono::time_point so
// that no clock type (and so no now()) exists anywhere in the core.
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time from_ns(int64_t ns) { return Time(ns); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ns() const { return ns_; }
  constexpr Duration since_epoch() const { return Duration(ns_); }

  constexpr Time operator+(Duration d) const { return Time(saturating_add(ns_, d.count())); }
  constexpr Time operator-(Duration d) const { return Time(saturating_subtract(ns_, d.count())); }
  constexpr Duration operator-(Time other) const { return Duration(ns_ - other.ns_); }
  constexpr Time& operator+=(Duration d) { return *this = *this + d; }
  // clang-tidy 14 misreads a defaulted <=> as a comparison with the literal 0.
  constexpr auto operator<=>(const Time&) const = default;  // NOLINT(modernize-use-nullptr)

 private:
  constexpr explicit Time(int64_t ns) : ns_(ns) {}
  // Time::max() stands for "never"; adding to it must not wrap around into the past.
  // The overflow builtins make the usual case one add and one branch: Time arithmetic runs in
  // every per-sequence deadline computation of the decision path.
  static constexpr int64_t saturating_add(int64_t a, int64_t b) {
    int64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) {
      return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    }
    return sum;
  }
  static constexpr int64_t saturating_subtract(int64_t a, int64_t b) {
    int64_t difference = 0;
    if (__builtin_sub_overflow(a, b, &difference)) {
      return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    }
    return difference;
  }
  int64_t ns_ = 0;
};

inline constexpr double to_seconds(Duration d) {
  return static_cast<double>(d.count()) * 1e-9;
}
inline constexpr double to_ms(Duration d) {
  return static_cast<double>(d.count()) * 1e-6;
}
inline constexpr double to_seconds(Time t) {
  return static_cast<double>(t.ns()) * 1e-9;
}

// Rounds to the nearest nanosecond; negative and NaN inputs are a caller bug and clamp to zero
// so that a broken cost model can never move time backwards.
// Below 2^52 ns (52 days) it rounds half away from zero without calling std::round: the
// scheduler converts a cost-model time on nearly every decision, and the library call is not
// inlined. Truncation and the fraction left over are exact there, so the result is std::round's.
inline Duration seconds_to_duration(double seconds) {
  if (!(seconds > 0.0)) return Duration(0);
  const double exact_ns = seconds * 1e9;
  if (exact_ns < 0x1p52) {
    const auto whole_ns = static_cast<int64_t>(exact_ns);
    const bool round_up = exact_ns - static_cast<double>(whole_ns) >= 0.5;
    return Duration(whole_ns + (round_up ? 1 : 0));
  }
  const double ns = std::round(exact_ns);
  if (ns >= static_cast<double>(std::numeric_limits<int64_t>::max())) return Duration::max();
  return Duration(static_cast<int64_t>(ns));
}
inline Duration ms_to_duration(double ms) {
  return seconds_to_duration(ms * 1e-3);
}
inline Time seconds_to_time(double seconds) {
  return Time::zero() + seconds_to_duration(seconds);
}

}  // namespace gangway
