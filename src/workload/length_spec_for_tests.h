// Length distributions for tests, written as one call each: one definition for every test file
// of the workload layer.
#pragma once

#include <cstdint>

#include "workload/workload_spec.h"

namespace gangway {

inline LengthSpec constant_length(int32_t value) {
  LengthSpec spec;
  spec.kind = LengthSpec::Kind::constant;
  spec.value = value;
  return spec;
}

inline LengthSpec geometric_length(double mean) {
  LengthSpec spec;
  spec.kind = LengthSpec::Kind::geometric;
  spec.mean = mean;
  return spec;
}

inline LengthSpec lognormal_length(double mean, double p99) {
  LengthSpec spec;
  spec.kind = LengthSpec::Kind::lognormal;
  spec.mean = mean;
  spec.p99 = p99;
  return spec;
}

}  // namespace gangway
