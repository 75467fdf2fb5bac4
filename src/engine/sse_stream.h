// The streamed answer of an OpenAI-compatible server, as `gangway load` and `gangway serve`'s
// engine proxy read it: Server-Sent
// Events split from the bytes of a chunked body (SseSplitter), and each event's data read as
// JSON (parse_stream_chunk), so that any server's spelling of the same JSON reads the same
// (spaces after colons, key order, a token in the same chunk as its finish_reason).
//
// Both are cheap enough to run per token beside the server under test: the splitter copies only
// an event's data, and the chunk reader is a SAX handler over nlohmann-json's parser that builds
// no document and looks only at the few fields it needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace gangway {

// Splits an SSE byte stream into events (the WHATWG rules that matter here): lines end with
// "\n", "\r\n" or "\r", an empty line ends an event, "data:" fields (less one space after the
// colon) are joined with "\n", comments (":...") and other fields are skipped. Bytes may arrive
// in any pieces.
class SseSplitter {
 public:
  // An event or a line longer than this is a broken stream: overflowed() turns true and the
  // rest is ignored.
  static constexpr size_t kMaxEventBytes = 4 * 1024 * 1024;

  // Calls on_data(data) for each event with data completed by `bytes`.
  void feed(std::string_view bytes, const std::function<void(std::string_view)>& on_data);
  bool overflowed() const { return overflowed_; }

 private:
  void line(std::string_view text, const std::function<void(std::string_view)>& on_data);

  std::string partial_line_;
  std::string data_;
  bool has_data_ = false;
  bool skip_line_feed_ = false;  // the last piece ended with "\r": a "\n" next belongs to it
  bool overflowed_ = false;
};

// One event's data.
struct StreamChunk {
  enum class Kind : uint8_t {
    kChunk,    // a JSON object (a completion chunk)
    kDone,     // "[DONE]"
    kError,    // {"error": {...}}
    kInvalid,  // neither: not JSON, not an object, or nested too deep
  };
  Kind kind = Kind::kInvalid;
  // choices[0].text (completions) or choices[0].delta.content (chat) is a non-empty string:
  // the chunk carries generated text.
  bool has_text = false;
  // That text (JSON escapes undone), when the reader was asked to keep it.
  std::string text;
  // choices[0].finish_reason when it is a string (null while the answer goes on).
  std::optional<std::string> finish_reason;
  // gangway's own fields (on the chunk or its choice): see docs/server.md.
  std::optional<double> engine_ttft_ms;
  std::optional<double> queue_ms;
  std::optional<int64_t> cached_prompt_tokens;
  // usage.completion_tokens and usage.prompt_tokens.
  std::optional<int64_t> completion_tokens;
  std::optional<int64_t> prompt_tokens;
  // error.code and error.message when they are strings.
  std::string error_code;
  std::string error_message;
};

// Deeper JSON than this is kInvalid (no OpenAI chunk nests more than a few levels).
inline constexpr int kMaxStreamChunkDepth = 32;

// `keep_text`: fill StreamChunk::text (the load generator only needs has_text).
StreamChunk parse_stream_chunk(std::string_view data, bool keep_text = false);

}  // namespace gangway
