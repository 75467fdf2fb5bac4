#include "server/api_error.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gangway {
namespace {

TEST(ApiErrorTest, SecondsAreWrittenWithoutFloatNoise) {
  EXPECT_EQ(seconds_text(std::chrono::seconds(15)), "15");
  EXPECT_EQ(seconds_text(seconds_to_duration(15.0)), "15");
  EXPECT_EQ(seconds_text(std::chrono::milliseconds(500)), "0.5");
  EXPECT_EQ(seconds_text(std::chrono::milliseconds(1)), "0.001");
  EXPECT_EQ(seconds_text(std::chrono::milliseconds(2250)), "2.25");
  EXPECT_EQ(seconds_text(std::chrono::nanoseconds(1999999999)), "2");
  EXPECT_EQ(seconds_text(Duration(0)), "0");
}

TEST(ApiErrorTest, NeverMeetableIsANonRetryable400ThatSaysWhy) {
  const ApiError error = error_for_reason(Reason::kDeadlineNeverMeetable, 5);
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error.type, "invalid_request_error");
  EXPECT_EQ(error.code, "deadline_never_meetable");
  EXPECT_FALSE(error.retry_after_s.has_value());
  EXPECT_NE(error.message.find("prefill alone"), std::string::npos);
  // The retryable "not now" keeps its 503 and Retry-After.
  const ApiError not_now = error_for_reason(Reason::kDeadlineUnmeetable, 5);
  EXPECT_EQ(not_now.status, 503);
  EXPECT_EQ(not_now.retry_after_s, 5);
}

// The statuses a load balancer acts on follow retry_elsewhere(), the one list of reasons to send
// a request to another node: each of those is a 503 with Retry-After (a rate limit: 429, retried
// here later), and no other reason answers 503 but the server's own stop.
TEST(ApiErrorTest, EveryRetryElsewhereReasonAndOnlyThoseIsA503WithRetryAfter) {
  for (int value = 0; value < kReasonCount; ++value) {
    const auto reason = static_cast<Reason>(value);
    const ApiError error = error_for_reason(reason, 3);
    SCOPED_TRACE(to_string(reason));
    EXPECT_EQ(error.code, to_string(reason));
    if (reason == Reason::kRateLimited) {
      EXPECT_EQ(error.status, 429);
    } else if (retry_elsewhere(reason)) {
      EXPECT_EQ(error.status, 503);
      EXPECT_EQ(error.type, "overloaded_error");
      EXPECT_EQ(error.retry_after_s, 3);
    } else if (reason != Reason::kDriverStopped) {
      EXPECT_NE(error.status, 503);
    }
    if (reason != Reason::kNone) {
      EXPECT_NE(error.status, 500);
    }
  }
}

TEST(ApiErrorTest, ErrorBodiesAreValidJsonWhateverTheMessageHolds) {
  ApiError error = ApiError::invalid("bad \xff byte", "p\xc3");
  const std::string body = error_body(error);
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << body;
  EXPECT_EQ(parsed["error"]["message"], "bad \xEF\xBF\xBD byte");
}

}  // namespace
}  // namespace gangway
