// One timed scheduler event for the decision-path benchmarks: steady_clock around the call (a
// driver may read clocks; the scheduler may not). Kept out of line so that callgrind can count
// exactly the timed events' instructions, which repeat run to run where wall time does not
// (`valgrind --tool=callgrind --toggle-collect='*timed_iteration_done*' gangway_bench ...`, the
// full command in bench/README.md).
#pragma once

#include <chrono>

#include "sched/scheduler.h"

namespace gangway {

// Completes the batch in flight on `gpu` and builds the next; returns the wall time it took, ns.
[[gnu::noinline]] inline double timed_iteration_done(Scheduler& scheduler, GpuId gpu, Time now) {
  const auto start = std::chrono::steady_clock::now();
  scheduler.on_iteration_done(EngineRef::small(gpu), {}, now);
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(end - start).count();
}

}  // namespace gangway
