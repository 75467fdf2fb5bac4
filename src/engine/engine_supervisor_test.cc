// EngineSupervisor with `gangway engine` as the launched process: it comes up, a kill -9 is seen
// and the engine restarted, a failed start names the engine and its log, stop() ends it.
#include "engine/engine_supervisor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/free_port_for_tests.h"

namespace gangway {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

EngineLaunchSpec test_engine(const std::string& name, const fs::path& work,
                             std::vector<std::string> extra = {}) {
  const uint16_t port = free_port();
  EngineLaunchSpec spec;
  spec.name = name;
  spec.command = {GANGWAY_BINARY, "engine", "--model",
                  "llama-3-8b",   "--port", std::to_string(port)};
  spec.command.insert(spec.command.end(), extra.begin(), extra.end());
  spec.environment = {{"GANGWAY_TEST_MARKER", "1"}};
  spec.health_url = "http://127.0.0.1:" + std::to_string(port) + "/health";
  spec.log_path = (work / (name + ".log")).string();
  return spec;
}

EngineSupervisorOptions quick_options() {
  EngineSupervisorOptions options;
  options.start_timeout = milliseconds(60'000);
  options.health_poll = milliseconds(20);
  options.restart_backoff_initial = milliseconds(20);
  options.restart_backoff_max = milliseconds(200);
  options.stop_grace = milliseconds(10'000);
  return options;
}

struct Work {
  fs::path path;
  Work() {
    path = fs::temp_directory_path() /
           ("gangway-supervisor-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~Work() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  static inline int counter = 0;
};

// Polls `condition` every 20 ms, at most 1,500 times.
template <typename Condition>
bool eventually(Condition condition) {
  for (int i = 0; i < 1500; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return false;
}

TEST(EngineSupervisor, StartsTheEngineAndRestartsItAfterAKill) {
  Work work;
  std::atomic<int> ups{0};
  std::atomic<int> downs{0};
  std::mutex reasons_mutex;
  std::string last_reason;
  EngineSupervisorCallbacks callbacks;
  callbacks.on_up = [&](size_t, const std::string&) { ++ups; };
  callbacks.on_down = [&](size_t, const std::string&, const std::string& reason) {
    std::lock_guard lock(reasons_mutex);
    last_reason = reason;
    ++downs;
  };
  const EngineLaunchSpec spec = test_engine("engine-a", work.path);
  EngineSupervisor supervisor({spec}, quick_options(), callbacks);
  supervisor.start();
  EXPECT_EQ(ups.load(), 1);
  EXPECT_TRUE(supervisor.is_up(0));
  EXPECT_TRUE(http_get_ok(spec.health_url, milliseconds(5000)));
  const pid_t first = supervisor.pid(0);
  ASSERT_GT(first, 0);

  ASSERT_EQ(kill(first, SIGKILL), 0);
  ASSERT_TRUE(eventually([&] { return ups.load() == 2; })) << "restarted and healthy again";
  EXPECT_EQ(downs.load(), 1);
  {
    std::lock_guard lock(reasons_mutex);
    EXPECT_EQ(last_reason, "killed by signal 9");
  }
  EXPECT_TRUE(supervisor.is_up(0));
  EXPECT_NE(supervisor.pid(0), first);
  EXPECT_EQ(supervisor.restarts(0), 1);
  EXPECT_TRUE(http_get_ok(spec.health_url, milliseconds(5000)));

  const pid_t second = supervisor.pid(0);
  supervisor.stop();
  EXPECT_FALSE(supervisor.is_up(0));
  EXPECT_NE(kill(second, 0), 0) << "stop() ended the process";
  EXPECT_FALSE(http_get_ok(spec.health_url, milliseconds(1000)));
}

TEST(EngineSupervisor, AFailedStartNamesTheEngineItsLogAndItsExitStatus) {
  Work work;
  EngineLaunchSpec spec = test_engine("engine-bad", work.path);
  spec.command = {GANGWAY_BINARY, "engine", "--model", "no-such-model"};
  EngineSupervisor supervisor({spec}, quick_options(), {});
  try {
    supervisor.start();
    FAIL() << "expected EngineStartError";
  } catch (const EngineStartError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("engine-bad"), std::string::npos) << message;
    EXPECT_NE(message.find(spec.log_path), std::string::npos) << message;
    EXPECT_NE(message.find("exited with status 2"), std::string::npos) << message;
  }
  std::ifstream log(spec.log_path);
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_NE(text.str().find("--model"), std::string::npos) << "the engine's own message";
}

TEST(EngineSupervisor, AnEngineThatNeverAnswersIsEndedAndReported) {
  Work work;
  EngineLaunchSpec spec = test_engine("engine-silent", work.path);
  spec.command = {"sleep", "30"};
  EngineSupervisorOptions options = quick_options();
  options.start_timeout = milliseconds(300);
  EngineSupervisor supervisor({spec}, options, {});
  try {
    supervisor.start();
    FAIL() << "expected EngineStartError";
  } catch (const EngineStartError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("engine-silent"), std::string::npos) << message;
    EXPECT_NE(message.find("did not answer"), std::string::npos) << message;
  }
  EXPECT_EQ(supervisor.pid(0), 0);
}

TEST(EngineSupervisor, HealthUrlsAreReadStrictly) {
  EXPECT_FALSE(http_get_ok("ftp://127.0.0.1:1/health", milliseconds(100)));
  EXPECT_FALSE(http_get_ok("http://127.0.0.1:99999/health", milliseconds(100)));
  EXPECT_FALSE(http_get_ok("http://not-an-address:80/health", milliseconds(100)));
  EXPECT_EQ(describe_exit(2 << 8), "exited with status 2");
}

}  // namespace
}  // namespace gangway
