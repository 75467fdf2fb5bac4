// Client text that is not valid UTF-8, or is huge, in every place the server repeats it: the
// answer is a normal error with a valid JSON body (bad bytes replaced, long text cut short), and
// the server goes on serving. Each test is one way in that once stopped the whole server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/server_harness_for_tests.h"

namespace gangway {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::http_call;
using testing::post_json;
using testing::raw_exchange;

struct RawAnswer {
  int status = 0;
  json body;
  size_t body_bytes = 0;
};

// Parses a raw HTTP answer with a Content-Length body; the body must be strict JSON.
RawAnswer parse_raw_answer(const std::string& answer) {
  RawAnswer out;
  EXPECT_THAT(answer, ::testing::StartsWith("HTTP/1.1 ")) << answer;
  if (answer.size() < 12) return out;
  out.status = std::stoi(answer.substr(9, 3));
  const size_t head_end = answer.find("\r\n\r\n");
  EXPECT_NE(head_end, std::string::npos) << answer;
  if (head_end == std::string::npos) return out;
  const std::string body = answer.substr(head_end + 4);
  out.body_bytes = body.size();
  out.body = json::parse(body, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(out.body.is_object()) << body;
  return out;
}

std::string generation_request(const std::string& extra_headers,
                               const std::string& body = R"({"model":"small","prompt":"x"})") {
  return "POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

class UntrustedBytesTest : public testing::SharedServerTest {
 protected:
  // The answer is the expected error, and afterwards the server still serves.
  static RawAnswer expect_error(const std::string& request, int status, const std::string& code) {
    const RawAnswer answer = parse_raw_answer(raw_exchange(port(), request));
    EXPECT_EQ(answer.status, status);
    if (answer.body.is_object() && answer.body.contains("error")) {
      EXPECT_EQ(answer.body["error"]["code"], code) << answer.body.dump();
    } else {
      ADD_FAILURE() << "no error object";
    }
    EXPECT_EQ(http_call(port(), "GET", "/health").status, 200);
    const auto reply =
        post_json(port(), "/v1/completions", R"({"model":"small","prompt":"ok","max_tokens":1})");
    EXPECT_EQ(reply.status, 200) << reply.body;
    return answer;
  }
  static std::string message(const RawAnswer& answer) {
    return answer.body["error"]["message"].get<std::string>();
  }
};

constexpr const char* kReplacement = "\xEF\xBF\xBD";

TEST_F(UntrustedBytesTest, InvalidByteInAnUnknownPathIs404) {
  // The exact bytes of `printf 'GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n'` (kept alive: the test
  // server closes the idle connection after its read timeout).
  const RawAnswer answer =
      expect_error("GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n", 404, "unknown_url");
  EXPECT_THAT(message(answer), HasSubstr(std::string("/") + kReplacement));
  // Latin-1 (not UTF-8) text too.
  expect_error("GET /caf\xe9 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404, "unknown_url");
}

TEST_F(UntrustedBytesTest, InvalidByteInAModelPathIs404) {
  const RawAnswer answer =
      expect_error("GET /v1/models/\xc3\x28 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404,
                   "model_not_found");
  EXPECT_THAT(message(answer), HasSubstr(std::string(kReplacement) + "("));
}

TEST_F(UntrustedBytesTest, InvalidByteInTheSloClassHeaderIs400) {
  const RawAnswer answer = expect_error(
      generation_request("X-Gangway-Slo-Class: interactiv\xe9\r\n"), 400, "invalid_value");
  EXPECT_EQ(answer.body["error"]["param"], "slo_class");
  EXPECT_THAT(message(answer), HasSubstr(std::string("interactiv") + kReplacement));
}

TEST_F(UntrustedBytesTest, InvalidByteInTheTenantHeaderIs400) {
  const RawAnswer answer =
      expect_error(generation_request("X-Gangway-Tenant: \xff\xfe\r\n"), 400, "invalid_value");
  EXPECT_EQ(answer.body["error"]["param"], "tenant");
}

TEST_F(UntrustedBytesTest, InvalidByteInTheDeadlineHeaderIs400) {
  const RawAnswer answer = expect_error(
      generation_request("X-Gangway-Ttft-Deadline-Ms: 10\x80\r\n"), 400, "invalid_value");
  EXPECT_EQ(answer.body["error"]["param"], "ttft_deadline_ms");
}

TEST_F(UntrustedBytesTest, InvalidByteInTheContentTypeIs415) {
  expect_error(generation_request("Content-Type: text/\xff\r\n"), 415, "unsupported_media_type");
}

TEST_F(UntrustedBytesTest, ValidUtf8IsRepeatedAsItCame) {
  const RawAnswer answer =
      expect_error(generation_request("X-Gangway-Tenant: caf\xc3\xa9\r\n"), 400, "invalid_value");
  EXPECT_THAT(message(answer), HasSubstr("'caf\xc3\xa9'"));
}

TEST_F(UntrustedBytesTest, HugeClientTextIsCutShortInTheAnswer) {
  // The test server's body limit is 64 KiB; a 60,000-byte model name comes back as a short
  // answer that says how long it was.
  const std::string name(60000, 'm');
  const RawAnswer answer =
      expect_error(generation_request("", R"({"model":")" + name + R"(","prompt":"x"})"), 404,
                   "model_not_found");
  EXPECT_LT(answer.body_bytes, 1024u);
  EXPECT_THAT(message(answer), HasSubstr("... (60000 bytes)"));
  const std::string path(6000, 'p');
  const RawAnswer long_path = expect_error(
      "GET /" + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404, "unknown_url");
  EXPECT_LT(long_path.body_bytes, 1024u);
}

}  // namespace
}  // namespace gangway
