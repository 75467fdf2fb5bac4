// The engine proxy's reading of an engine's answer, against a loopback server that sends a
// canned answer: token counts come from the engine's usage when it sends one, and counts that do
// not fit the scheduler's int32 are clamped, never wrapped into negative numbers.
#include "server/engine_stream.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <optional>
#include <string>
#include <vector>

#include "server/loopback_answer_server_for_tests.h"

namespace gangway {
namespace {

EngineStreamEnd read_answer(const std::string& answer, std::vector<int32_t>* token_counts) {
  LoopbackAnswerServer engine;
  engine.serve(answer);
  UpstreamRequest request;
  request.host = "127.0.0.1";
  request.port = engine.port();
  request.target = "/v1/completions";
  request.body = R"({"model":"m","prompt":"x","stream":true})";
  std::optional<EngineStreamEnd> result;
  int ends = 0;
  EngineStream::Handlers handlers;
  handlers.on_text = [&](std::string_view, int32_t tokens) { token_counts->push_back(tokens); };
  handlers.on_end = [&](const EngineStreamEnd& end) {
    ++ends;
    result = end;
  };
  boost::asio::io_context io;
  {
    EngineStream stream(io.get_executor(), request, handlers);
    io.run();
  }
  EXPECT_EQ(ends, 1);
  return result.value_or(EngineStreamEnd{});
}

TEST(EngineStreamTest, CountsComeFromTheEnginesUsage) {
  std::vector<int32_t> tokens;
  const EngineStreamEnd end = read_answer(
      streamed_answer({R"({"choices":[{"index":0,"text":" a","finish_reason":null}]})",
                       R"({"choices":[{"index":0,"text":" b","finish_reason":"length"}]})",
                       R"({"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2}})",
                       "[DONE]"}),
      &tokens);
  EXPECT_EQ(end.outcome, Outcome::kCompleted);
  EXPECT_EQ(end.finish_reason, "length");
  EXPECT_EQ(end.output_tokens, 2);
  EXPECT_EQ(end.prompt_tokens, 7);
  EXPECT_EQ(tokens, (std::vector<int32_t>{1, 2}));
}

TEST(EngineStreamTest, CountsTooLargeForTheSchedulerAreClampedNotWrapped) {
  std::vector<int32_t> tokens;
  const EngineStreamEnd end = read_answer(
      streamed_answer(
          {R"({"choices":[{"index":0,"text":" a","finish_reason":null}],"usage":{"completion_tokens":4294967295}})",
           R"({"choices":[{"index":0,"text":" b","finish_reason":"stop"}]})",
           R"({"choices":[],"usage":{"prompt_tokens":9223372036854775807,"completion_tokens":18446744073709551615}})",
           "[DONE]"}),
      &tokens);
  EXPECT_EQ(end.outcome, Outcome::kCompleted);
  EXPECT_EQ(end.output_tokens, INT32_MAX);
  EXPECT_EQ(end.prompt_tokens, INT32_MAX);
  EXPECT_EQ(tokens, (std::vector<int32_t>{INT32_MAX, INT32_MAX}));
}

}  // namespace
}  // namespace gangway
