#include "engine/sse_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gangway {
namespace {

std::vector<std::string> split(const std::vector<std::string>& pieces) {
  SseSplitter splitter;
  std::vector<std::string> events;
  for (const std::string& piece : pieces) {
    splitter.feed(piece, [&](std::string_view data) { events.emplace_back(data); });
  }
  return events;
}

TEST(SseSplitterTest, EventsEndAtAnEmptyLineWhateverTheLineEndings) {
  EXPECT_EQ(split({"data: a\n\ndata: b\r\n\r\ndata: c\r\rdata:d\n\n"}),
            (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(SseSplitterTest, PiecesMaySplitAnywhereEvenBetweenCrAndLf) {
  const std::string stream = "data: {\"x\": 1}\r\n\r\n: ping\r\n\r\ndata: [DONE]\r\n\r\n";
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    EXPECT_EQ(split({stream.substr(0, cut), stream.substr(cut)}),
              (std::vector<std::string>{"{\"x\": 1}", "[DONE]"}))
        << "cut at " << cut;
  }
}

TEST(SseSplitterTest, DataLinesJoinAndOtherFieldsAreSkipped) {
  EXPECT_EQ(split({"event: message\nid: 7\ndata: first\ndata: second\nretry: 5\n\n"}),
            (std::vector<std::string>{"first\nsecond"}));
  EXPECT_TRUE(split({": only a comment\n\n"}).empty());
}

TEST(SseSplitterTest, AnEndlessLineIsABrokenStream) {
  SseSplitter splitter;
  const std::string piece(1024 * 1024, 'x');
  int events = 0;
  for (int i = 0; i < 6; ++i) splitter.feed(piece, [&](std::string_view) { ++events; });
  EXPECT_TRUE(splitter.overflowed());
  EXPECT_EQ(events, 0);
}

TEST(StreamChunkTest, SpacedJsonReadsLikeCompactJson) {
  const StreamChunk compact = parse_stream_chunk(
      R"({"id":"x","choices":[{"index":0,"text":" the","logprobs":null,"finish_reason":null}]})");
  const StreamChunk spaced = parse_stream_chunk(
      R"({ "id": "x", "choices": [ { "index": 0, "text": " the", "finish_reason": null } ] })");
  for (const StreamChunk& chunk : {compact, spaced}) {
    EXPECT_EQ(chunk.kind, StreamChunk::Kind::kChunk);
    EXPECT_TRUE(chunk.has_text);
    EXPECT_FALSE(chunk.finish_reason.has_value());
  }
}

TEST(StreamChunkTest, ATokenInTheSameChunkAsTheFinishReasonCounts) {
  const StreamChunk chunk = parse_stream_chunk(
      R"({"choices": [{"delta": {"content": " end"}, "finish_reason": "length"}],
          "gangway": {"queue_ms": 1.5, "engine_ttft_ms": 12, "cached_prompt_tokens": 32}})");
  EXPECT_TRUE(chunk.has_text);
  EXPECT_EQ(chunk.finish_reason, "length");
  EXPECT_EQ(chunk.queue_ms, 1.5);
  EXPECT_EQ(chunk.engine_ttft_ms, 12);
  EXPECT_EQ(chunk.cached_prompt_tokens, 32);
}

TEST(StreamChunkTest, TheRoleChunkAndUsageCarryNoText) {
  const StreamChunk role =
      parse_stream_chunk(R"({"choices":[{"delta":{"role":"assistant","content":""}}]})");
  EXPECT_FALSE(role.has_text);
  const StreamChunk usage = parse_stream_chunk(
      R"({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 7}})");
  EXPECT_FALSE(usage.has_text);
  EXPECT_EQ(usage.completion_tokens, 7);
}

TEST(StreamChunkTest, FieldsOutsideTheirPlaceAreNotRead) {
  // "text" of a second choice, a "content" outside a delta, a nested "usage".
  const StreamChunk chunk = parse_stream_chunk(
      R"({"choices":[{"text":""},{"text":"x","finish_reason":"stop"}],"content":"y",
          "extra":{"usage":{"completion_tokens":3}}})");
  EXPECT_FALSE(chunk.has_text);
  EXPECT_FALSE(chunk.finish_reason.has_value());
  EXPECT_FALSE(chunk.completion_tokens.has_value());
}

TEST(StreamChunkTest, DoneErrorsAndGarbage) {
  EXPECT_EQ(parse_stream_chunk("[DONE]").kind, StreamChunk::Kind::kDone);
  const StreamChunk error = parse_stream_chunk(
      R"({"error": {"message": "m", "type": "overloaded_error", "code": "driver_stopped"}})");
  EXPECT_EQ(error.kind, StreamChunk::Kind::kError);
  EXPECT_EQ(error.error_code, "driver_stopped");
  EXPECT_EQ(parse_stream_chunk(R"({"object": "error", "message": "m", "code": 400})").kind,
            StreamChunk::Kind::kError);
  for (const char* bad : {"", "[1,2]", "{\"a\":", "nonsense", "\"text\"", "{\"a\":1} x"}) {
    EXPECT_EQ(parse_stream_chunk(bad).kind, StreamChunk::Kind::kInvalid) << bad;
  }
  const std::string deep = "{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}";
  EXPECT_EQ(parse_stream_chunk(deep).kind, StreamChunk::Kind::kInvalid);
}

}  // namespace
}  // namespace gangway
