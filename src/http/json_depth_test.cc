#include "http/json_depth.h"

#include <gtest/gtest.h>

#include <string>

#include "http/http_status.h"

namespace gangway {
namespace {

TEST(JsonDepth, CountsNestedArraysAndObjects) {
  EXPECT_FALSE(json_nests_deeper_than(R"({"a": [1, {"b": 2}]})", 3));
  EXPECT_TRUE(json_nests_deeper_than(R"({"a": [1, {"b": [2]}]})", 3));
  EXPECT_FALSE(json_nests_deeper_than("", 1));
}

TEST(JsonDepth, BracketsInsideStringsDoNotCount) {
  EXPECT_FALSE(json_nests_deeper_than(R"({"prompt": "[[[[[[[[{{{{"})", 1));
  // An escaped quote does not end the string.
  EXPECT_FALSE(json_nests_deeper_than(R"({"prompt": "\"[[[["})", 1));
}

TEST(JsonDepth, AnUnclosedMillionBracketsIsTooDeep) {
  EXPECT_TRUE(json_nests_deeper_than(std::string(1'000'000, '['), 64));
}

TEST(HttpStatus, NamesTheCodesTheServersSend) {
  EXPECT_STREQ(http_status_text(200), "OK");
  EXPECT_STREQ(http_status_text(429), "Too Many Requests");
  EXPECT_STREQ(http_status_text(503), "Service Unavailable");
  EXPECT_STREQ(http_status_text(299), "Unknown");
}

}  // namespace
}  // namespace gangway
