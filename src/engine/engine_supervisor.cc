#include "engine/engine_supervisor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace gangway {
namespace {

using Clock = std::chrono::steady_clock;

struct ParsedUrl {
  std::string host;
  uint16_t port = 80;
  std::string path = "/";
};

bool parse_http_url(const std::string& url, ParsedUrl& out) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) return false;
  const std::string rest = url.substr(scheme.size());
  const size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  out.path = slash == std::string::npos ? "/" : rest.substr(slash);
  const size_t colon = authority.rfind(':');
  out.host = authority.substr(0, colon);
  if (colon != std::string::npos) {
    const std::string port = authority.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return false;
    }
    const int value = std::stoi(port);
    if (value < 1 || value > 65535) return false;
    out.port = static_cast<uint16_t>(value);
  }
  if (out.host == "localhost") out.host = "127.0.0.1";
  return !out.host.empty();
}

timeval to_timeval(std::chrono::milliseconds timeout) {
  timeval value{};
  value.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  value.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  return value;
}

}  // namespace

bool http_get_ok(const std::string& url, std::chrono::milliseconds timeout) {
  ParsedUrl parsed;
  if (!parse_http_url(url, parsed)) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(parsed.port);
  if (inet_pton(AF_INET, parsed.host.c_str(), &address.sin_addr) != 1) return false;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const timeval limit = to_timeval(timeout);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  bool ok = false;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) {
    const std::string request = "GET " + parsed.path + " HTTP/1.1\r\nHost: " + parsed.host +
                                "\r\nConnection: close\r\n\r\n";
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      char buffer[64] = {};
      size_t got = 0;
      while (got < 12) {
        const ssize_t n = recv(fd, buffer + got, sizeof buffer - 1 - got, 0);
        if (n <= 0) break;
        got += static_cast<size_t>(n);
      }
      const std::string status(buffer, got);
      ok = status.rfind("HTTP/1.", 0) == 0 && status.size() >= 12 &&
           status.compare(9, 3, "200") == 0;
    }
  }
  close(fd);
  return ok;
}

std::string describe_exit(int wait_status) {
  if (WIFEXITED(wait_status))
    return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) return "killed by signal " + std::to_string(WTERMSIG(wait_status));
  return "stopped";
}

EngineSupervisor::EngineSupervisor(std::vector<EngineLaunchSpec> specs,
                                   EngineSupervisorOptions options,
                                   EngineSupervisorCallbacks callbacks)
    : options_(options), callbacks_(std::move(callbacks)) {
  for (auto& spec : specs) {
    Engine engine;
    engine.spec = std::move(spec);
    engines_.push_back(std::move(engine));
  }
}

EngineSupervisor::~EngineSupervisor() {
  stop();
}

pid_t EngineSupervisor::spawn(const EngineLaunchSpec& spec) const {
  if (spec.command.empty()) {
    throw EngineStartError("engine " + spec.name + ": the command is empty");
  }
  // Everything the child needs is built before fork(): after it, only async-signal-safe calls.
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const std::string key = text.substr(0, text.find('='));
    if (!spec.environment.count(key)) environment.push_back(text);
  }
  for (const auto& [key, value] : spec.environment) environment.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& text : environment) envp.push_back(text.data());
  envp.push_back(nullptr);
  std::vector<std::string> arguments = spec.command;
  std::vector<char*> argv;
  for (auto& text : arguments) argv.push_back(text.data());
  argv.push_back(nullptr);
  const int log = open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    throw EngineStartError("engine " + spec.name + ": cannot open its log file " + spec.log_path +
                           ": " + std::strerror(errno));
  }
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(log);
    throw EngineStartError("engine " + spec.name + ": fork failed: " + std::strerror(error));
  }
  if (pid == 0) {
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    execvpe(argv[0], argv.data(), envp.data());
    static const char kMessage[] = "gangway: exec of the engine's command failed\n";
    (void)!write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    _exit(127);
  }
  close(log);
  return pid;
}

std::string EngineSupervisor::wait_until_healthy(Engine& engine) {
  const auto deadline = Clock::now() + options_.start_timeout;
  for (;;) {
    int status = 0;
    if (waitpid(engine.pid, &status, WNOHANG) == engine.pid) {
      std::lock_guard lock(mutex_);
      engine.pid = 0;
      return describe_exit(status) + " before answering " + engine.spec.health_url;
    }
    if (http_get_ok(engine.spec.health_url,
                    std::max(options_.health_poll, std::chrono::milliseconds(200)))) {
      return "";
    }
    {
      std::unique_lock lock(mutex_);
      if (stopping_) return "stopped while starting";
      if (Clock::now() >= deadline) break;
      wake_.wait_for(lock, options_.health_poll, [this] { return stopping_; });
    }
  }
  end_process(engine.pid);
  std::lock_guard lock(mutex_);
  engine.pid = 0;
  return "did not answer " + engine.spec.health_url + " within " +
         std::to_string(options_.start_timeout.count()) + " ms";
}

void EngineSupervisor::start() {
  for (size_t index = 0; index < engines_.size(); ++index) {
    Engine& engine = engines_[index];
    std::string failure;
    try {
      const pid_t pid = spawn(engine.spec);
      {
        std::lock_guard lock(mutex_);
        engine.pid = pid;
      }
      failure = wait_until_healthy(engine);
    } catch (const EngineStartError&) {
      stop();
      throw;
    }
    if (!failure.empty()) {
      stop();
      throw EngineStartError("engine " + engine.spec.name + " failed to start: " + failure +
                             "; its log: " + engine.spec.log_path);
    }
    {
      std::lock_guard lock(mutex_);
      engine.up = true;
      engine.backoff = options_.restart_backoff_initial;
    }
    if (callbacks_.on_up) callbacks_.on_up(index, engine.spec.name);
  }
  monitor_ = std::thread([this] { monitor(); });
}

void EngineSupervisor::monitor() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, options_.health_poll, [this] { return stopping_; });
      if (stopping_) return;
    }
    for (size_t index = 0; index < engines_.size(); ++index) {
      Engine& engine = engines_[index];
      if (engine.pid != 0) {
        int status = 0;
        if (waitpid(engine.pid, &status, WNOHANG) != engine.pid) continue;
        {
          std::lock_guard lock(mutex_);
          engine.pid = 0;
          engine.up = false;
          engine.restart_at = Clock::now() + engine.backoff;
        }
        if (callbacks_.on_down) callbacks_.on_down(index, engine.spec.name, describe_exit(status));
        continue;
      }
      if (Clock::now() < engine.restart_at) continue;
      std::string failure;
      try {
        const pid_t pid = spawn(engine.spec);
        {
          std::lock_guard lock(mutex_);
          engine.pid = pid;
          ++engine.restarts;
        }
        failure = wait_until_healthy(engine);
      } catch (const EngineStartError& error) {
        failure = error.what();
      }
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      if (failure.empty()) {
        engine.up = true;
        engine.backoff = options_.restart_backoff_initial;
      } else {
        engine.backoff = std::min(engine.backoff * 2, options_.restart_backoff_max);
        engine.restart_at = Clock::now() + engine.backoff;
      }
      // The callbacks run without the lock (they may read is_up()).
      mutex_.unlock();
      if (failure.empty()) {
        if (callbacks_.on_up) callbacks_.on_up(index, engine.spec.name);
      } else if (callbacks_.on_down) {
        callbacks_.on_down(index, engine.spec.name, "restart failed: " + failure);
      }
      mutex_.lock();
    }
  }
}

void EngineSupervisor::end_process(pid_t pid) const {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  const auto deadline = Clock::now() + options_.stop_grace;
  int status = 0;
  while (Clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
}

void EngineSupervisor::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (monitor_.joinable()) monitor_.join();
  for (Engine& engine : engines_) {
    pid_t pid = 0;
    {
      std::lock_guard lock(mutex_);
      pid = engine.pid;
      engine.pid = 0;
      engine.up = false;
    }
    end_process(pid);
  }
}

bool EngineSupervisor::is_up(size_t index) const {
  std::lock_guard lock(mutex_);
  return engines_.at(index).up;
}

pid_t EngineSupervisor::pid(size_t index) const {
  std::lock_guard lock(mutex_);
  return engines_.at(index).pid;
}

int64_t EngineSupervisor::restarts(size_t index) const {
  std::lock_guard lock(mutex_);
  return engines_.at(index).restarts;
}

}  // namespace gangway
