// Test-only: counts heap allocations made by this test program, so tests can prove that hot-path
// calls (histogram record, time-account observe, per-request metrics) never allocate. The count
// comes from the replacement operator new in allocation_count_test.cc, linked only into
// metrics_tests; the library never uses it.
#pragma once

#include <cstdint>

namespace gangway::testing {

// Allocations through operator new since the program started.
uint64_t allocations_so_far();

}  // namespace gangway::testing
