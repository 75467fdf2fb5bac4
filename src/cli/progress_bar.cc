#include "cli/progress_bar.h"

#include <fmt/format.h>

#include <algorithm>

namespace gangway {

ProgressBar::ProgressBar(std::ostream* out, double total, std::string what)
    : out_(out),
      total_(std::max(total, 1e-9)),
      what_(std::move(what)),
      start_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(double done, const std::string& note) {
  if (out_ == nullptr) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  done_ = std::max(done_, std::min(done, total_));
  constexpr int kCells = 30;
  const double share = done_ / total_;
  const int filled = static_cast<int>(share * kCells);
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start_)
          .count();
  *out_ << fmt::format("\r[{}{}] {:3.0f}% {} {}:{:02d} {:<24}", std::string(filled, '#'),
                       std::string(kCells - filled, '.'), 100 * share, what_, elapsed / 60,
                       elapsed % 60, note.substr(0, 24))
        << std::flush;
}

void ProgressBar::finish() {
  if (out_ == nullptr) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  *out_ << "\r" << std::string(96, ' ') << "\r" << std::flush;
}

}  // namespace gangway
