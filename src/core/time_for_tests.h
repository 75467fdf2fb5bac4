// Points in simulated time for tests, written as milliseconds after the start: one definition for
// every test file (some test executables compile all their files as one unit, where copies of it
// would collide).
#pragma once

#include "core/time.h"

namespace gangway {

inline Time at_ms(double ms) {
  return Time::zero() + ms_to_duration(ms);
}

}  // namespace gangway
