// Launches engine processes and keeps them running: each in turn until its health endpoint
// answers 200 (within start_timeout), then a monitor thread watches them (waitpid) and restarts
// one that dies, after an exponential backoff, reporting down and up through callbacks. stop()
// sends SIGTERM to the processes it launched, and SIGKILL to those still there after
// stop_grace.
//
// Callbacks run on the monitor thread (on_up also on the thread that calls start()); they must
// not call stop().
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_launch_spec.h"

namespace gangway {

// A launch that failed: the message names the engine, its log file, and what happened (its exit
// status, or that it did not answer its health endpoint in time).
class EngineStartError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EngineSupervisorOptions {
  std::chrono::milliseconds start_timeout{120'000};
  std::chrono::milliseconds health_poll{100};
  std::chrono::milliseconds restart_backoff_initial{1'000};
  std::chrono::milliseconds restart_backoff_max{60'000};
  std::chrono::milliseconds stop_grace{10'000};
};

struct EngineSupervisorCallbacks {
  std::function<void(size_t index, const std::string& name)> on_up;
  // reason: "exited with status 1", "killed by signal 9", or why a restart failed.
  std::function<void(size_t index, const std::string& name, const std::string& reason)> on_down;
};

class EngineSupervisor {
 public:
  EngineSupervisor(std::vector<EngineLaunchSpec> specs, EngineSupervisorOptions options,
                   EngineSupervisorCallbacks callbacks);
  ~EngineSupervisor();
  EngineSupervisor(const EngineSupervisor&) = delete;
  EngineSupervisor& operator=(const EngineSupervisor&) = delete;

  // Launches every engine, one at a time, each until it is healthy; then starts watching them.
  // Throws EngineStartError (after stopping those already launched) when one fails.
  void start();
  // Stops watching and ends every process it launched. Idempotent.
  void stop();

  bool is_up(size_t index) const;
  // The engine's current process id (0 while none runs).
  pid_t pid(size_t index) const;
  // Restarts so far.
  int64_t restarts(size_t index) const;

 private:
  struct Engine {
    EngineLaunchSpec spec;
    pid_t pid = 0;
    bool up = false;
    int64_t restarts = 0;
    std::chrono::milliseconds backoff{0};
    std::chrono::steady_clock::time_point restart_at{};
  };

  // Forks and execs the engine; its pid. Throws EngineStartError if it cannot.
  pid_t spawn(const EngineLaunchSpec& spec) const;
  // Waits until the engine answers health; empty when it does, else why not (the process is
  // ended when it did not answer).
  std::string wait_until_healthy(Engine& engine);
  void monitor();
  void end_process(pid_t pid) const;

  EngineSupervisorOptions options_;
  EngineSupervisorCallbacks callbacks_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Engine> engines_;
  bool stopping_ = false;
  std::thread monitor_;
};

// Whether GET `url` (http://HOST:PORT/PATH, HOST an IP address or localhost) answers 200 within
// `timeout`.
bool http_get_ok(const std::string& url, std::chrono::milliseconds timeout);

// "exited with status N" or "killed by signal N" for a waitpid status.
std::string describe_exit(int wait_status);

}  // namespace gangway
