// Points in simulated time for tests, written as milliseconds after the start: one definition
// shared by every test file (test executables compile several files as one unit).
#pragma once

#include "core/time.h"

namespace gangway {

inline Time at_ms(double ms) {
  return Time::zero() + ms_to_duration(ms);
}

}  // namespace gangway
