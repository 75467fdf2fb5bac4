// The replacement global operator new behind allocation_count_for_tests.h, and a check that it
// counts (so the no-allocation tests elsewhere cannot pass vacuously).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "metrics/allocation_count_for_tests.h"

namespace {
// Test-program state by necessity: operator new is global.
std::atomic<uint64_t> allocation_count{0};
}  // namespace

// GCC, after inlining these into a call site, sees `new` paired with free() and warns; the pairing
// is right because this operator new allocates with malloc.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size) {
  allocation_count.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  if (void* memory = std::malloc(size)) return memory;
  throw std::bad_alloc();
}
void operator delete(void* memory) noexcept {
  std::free(memory);
}
void operator delete(void* memory, std::size_t) noexcept {
  std::free(memory);
}

namespace gangway::testing {
uint64_t allocations_so_far() {
  return allocation_count.load(std::memory_order_relaxed);
}
}  // namespace gangway::testing

namespace gangway {
namespace {

TEST(AllocationCount, CountsAHeapAllocation) {
  const uint64_t before = testing::allocations_so_far();
  auto values = std::make_unique<std::vector<int>>(100, 1);
  EXPECT_GE(testing::allocations_so_far(), before + 2);
  EXPECT_EQ(values->size(), 100u);
}

}  // namespace
}  // namespace gangway
