#include "cli/parallel_runs.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace gangway {

int default_jobs() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void run_in_parallel(size_t count, int jobs, const std::function<void(size_t)>& task) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  size_t failed_index = count;
  std::exception_ptr failure;
  auto work = [&] {
    for (size_t i = next++; i < count && !failed; i = next++) {
      try {
        task(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (i < failed_index) {
          failed_index = i;
          failure = std::current_exception();
        }
        failed = true;
      }
    }
  };
  const size_t threads = std::min<size_t>(count, static_cast<size_t>(std::max(1, jobs)));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace gangway
