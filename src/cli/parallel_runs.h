// Runs independent simulations on several threads (`--jobs`). Each task writes only its own
// result slot, so the output does not depend on which thread ran what: runs stay deterministic.
#pragma once

#include <cstddef>
#include <functional>

namespace gangway {

// The default for --jobs: the machine's hardware threads (at least 1).
int default_jobs();

// Calls task(0) .. task(count - 1), on up to `jobs` threads, and waits for all of them. If tasks
// throw, the exception of the lowest-numbered one is rethrown here (after every thread ended);
// tasks not yet started are then skipped.
void run_in_parallel(size_t count, int jobs, const std::function<void(size_t)>& task);

}  // namespace gangway
