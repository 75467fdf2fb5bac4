// A one-line progress bar on a terminal (stderr), redrawn in place: long commands (`gangway
// capacity`) say how far they are and how long they have run. Safe to call from several threads.
#pragma once

#include <chrono>
#include <mutex>
#include <ostream>
#include <string>

namespace gangway {

class ProgressBar {
 public:
  // `out` null: draws nothing. `total` units of work.
  ProgressBar(std::ostream* out, double total, std::string what);
  // `done` units finished so far (it only ever moves forward), and a short note.
  void update(double done, const std::string& note);
  // Clears the line.
  void finish();

 private:
  std::ostream* out_;
  double total_;
  std::string what_;
  double done_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
};

}  // namespace gangway
