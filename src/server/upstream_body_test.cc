// make_upstream_body: the engine gets the client's body, renamed, streamed with usage, without
// gangway's own fields.
#include "server/upstream_body.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gangway {
namespace {

TEST(UpstreamBodyTest, RenamesStreamsWithUsageAndDropsSchedulingFields) {
  const nlohmann::json body = nlohmann::json::parse(make_upstream_body(
      R"({"model": "llama-3-8b", "prompt": "hi", "max_tokens": 4, "temperature": 0.5,
          "stream": false, "slo_class": "interactive", "tenant": "a", "ttft_deadline_ms": 100})",
      "meta-llama/Meta-Llama-3-8B"));
  EXPECT_EQ(body["model"], "meta-llama/Meta-Llama-3-8B");
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
  EXPECT_EQ(body["temperature"], 0.5);
  EXPECT_EQ(body["max_tokens"], 4);
  EXPECT_FALSE(body.contains("slo_class"));
  EXPECT_FALSE(body.contains("tenant"));
  EXPECT_FALSE(body.contains("ttft_deadline_ms"));
}

}  // namespace
}  // namespace gangway
