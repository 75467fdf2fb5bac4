// Arrival times of one stream's requests, drawn one at a time from an ArrivalSpec (constant
// memory however long the run).
//
// Time is kept internally as double seconds (exact enough: 1e-12 s after an hour) and handed out
// rounded to the nanosecond. Every process is exact, with no time discretisation:
// - poisson: exponential gaps;
// - gamma: gamma gaps of mean 1/rate and shape 1/cv^2 (cv 0: evenly spaced);
// - on_off: Poisson at each phase's rate; a gap that would cross a phase boundary is redrawn
//   from the boundary at the next phase's rate (memorylessness makes that exact);
// - ramp: non-homogeneous Poisson by exact inversion of the integrated rate (a quadratic in
//   the ramp, linear after it).
#pragma once

#include <cstdint>
#include <optional>

#include "core/time.h"
#include "workload/rng.h"
#include "workload/workload_spec.h"

namespace gangway {

class ArrivalProcess {
 public:
  // Throws InputError (key "arrival") for a spec that validate() rejects.
  ArrivalProcess(const ArrivalSpec& spec, Rng rng);

  // The next arrival, at or after the previous one; nullopt once the rate stays zero forever.
  std::optional<Time> next();

 private:
  std::optional<double> next_seconds();
  std::optional<double> next_on_off();
  std::optional<double> next_ramp();

  ArrivalSpec spec_;  // with rate_scale applied to every rate
  Rng rng_;
  double now_s_ = 0.0;
  double gamma_shape_ = 1.0;
  // on_off: the current phase and when it ends.
  bool in_on_phase_ = true;
  double phase_end_s_ = 0.0;
  bool exhausted_ = false;
};

}  // namespace gangway
