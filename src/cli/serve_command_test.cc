// gangway serve's flags: a bad value is a usage error (exit status 2) that names the flag and
// what it expects, before anything is bound.
#include "cli/serve_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace gangway {
namespace {

using ::testing::HasSubstr;

TEST(ServeCommandTest, SchedulerThreadTakesOwnOrShared) {
  ServeOptions options;
  options.scheduler_thread = "both";
  std::ostringstream err;
  EXPECT_EQ(run_serve(options, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("--scheduler-thread: expected own or shared, got 'both'"));
}

TEST(ServeCommandTest, NetworkThreadsOutOfRangeIsAUsageError) {
  ServeOptions options;
  options.network_threads = 0;
  std::ostringstream err;
  EXPECT_EQ(run_serve(options, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("--network-threads: expected 1 to 64"));
}

}  // namespace
}  // namespace gangway
