#include "engine/sse_stream.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

namespace gangway {

void SseSplitter::feed(std::string_view bytes,
                       const std::function<void(std::string_view)>& on_data) {
  if (overflowed_) return;
  size_t at = 0;
  if (skip_line_feed_ && !bytes.empty()) {
    if (bytes.front() == '\n') at = 1;
    skip_line_feed_ = false;
  }
  while (at < bytes.size()) {
    const size_t end = bytes.find_first_of("\r\n", at);
    if (end == std::string_view::npos) {
      partial_line_.append(bytes.substr(at));
      if (partial_line_.size() > kMaxEventBytes) overflowed_ = true;
      return;
    }
    size_t next = end + 1;
    if (bytes[end] == '\r') {
      if (next < bytes.size() && bytes[next] == '\n') {
        ++next;
      } else if (next == bytes.size()) {
        skip_line_feed_ = true;
      }
    }
    if (partial_line_.empty()) {
      line(bytes.substr(at, end - at), on_data);
    } else {
      partial_line_.append(bytes.substr(at, end - at));
      line(partial_line_, on_data);
      partial_line_.clear();
    }
    if (overflowed_) return;
    at = next;
  }
}

void SseSplitter::line(std::string_view text,
                       const std::function<void(std::string_view)>& on_data) {
  if (text.empty()) {
    if (has_data_) on_data(data_);
    data_.clear();
    has_data_ = false;
    return;
  }
  if (text.front() == ':') return;  // a comment (a keep-alive ping)
  const size_t colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  if (field != "data") return;  // event, id, retry: nothing gangway load needs
  std::string_view value = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (value.starts_with(' ')) value.remove_prefix(1);
  if (has_data_) data_.push_back('\n');
  data_.append(value);
  has_data_ = true;
  if (data_.size() > kMaxEventBytes) overflowed_ = true;
}

namespace {

// Where a value sits: the containers that matter, and everything else.
enum class Place : uint8_t {
  kOther,
  kRoot,
  kError,
  kChoices,
  kFirstChoice,
  kDelta,
  kGangway,
  kUsage,
};

// Reads a chunk's few fields as the parser walks it (nlohmann-json's SAX interface).
class ChunkReader {
 public:
  ChunkReader(StreamChunk& out, bool keep_text) : out_(out), keep_text_(keep_text) {}

  bool null() { return value_done(); }
  bool boolean(bool) { return value_done(); }
  bool number_integer(int64_t value) { return number(static_cast<double>(value), value); }
  bool number_unsigned(uint64_t value) {
    return number(static_cast<double>(value), value > static_cast<uint64_t>(INT64_MAX)
                                                  ? INT64_MAX
                                                  : static_cast<int64_t>(value));
  }
  bool number_float(double value, const std::string&) {
    const bool whole = std::isfinite(value) && std::fabs(value) < 9e18;
    return number(value, whole ? static_cast<int64_t>(value) : 0);
  }
  bool string(std::string& value) {
    const Place place = here();
    if ((place == Place::kFirstChoice && key_ == "text") ||
        (place == Place::kDelta && key_ == "content")) {
      out_.has_text = out_.has_text || !value.empty();
      if (keep_text_) out_.text += value;
    } else if (place == Place::kFirstChoice && key_ == "finish_reason") {
      out_.finish_reason = value;
    } else if (place == Place::kError && key_ == "code") {
      out_.error_code = value;
    } else if ((place == Place::kError || place == Place::kRoot) && key_ == "message") {
      out_.error_message = value;
    } else if (place == Place::kRoot && key_ == "object" && value == "error") {
      saw_error_object_ = true;  // vLLM's older error event: {"object": "error", ...}
    }
    return value_done();
  }
  bool binary(nlohmann::json::binary_t&) { return value_done(); }
  bool start_object(size_t) { return open(/*array=*/false); }
  bool end_object() { return close(); }
  bool start_array(size_t) { return open(/*array=*/true); }
  bool end_array() { return close(); }
  bool key(std::string& name) {
    key_ = name;
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::json::exception&) { return false; }

  bool saw_error_object() const { return saw_error_object_; }

 private:
  struct Frame {
    Place place;
    bool array;
    int64_t elements = 0;  // values seen so far (arrays)
  };

  Place here() const { return stack_.empty() ? Place::kOther : stack_.back().place; }

  // Where a container opened now sits.
  Place place_of_new_container(bool array) const {
    if (stack_.empty()) return array ? Place::kOther : Place::kRoot;
    const Frame& parent = stack_.back();
    if (parent.array) {
      return parent.place == Place::kChoices && parent.elements == 0 && !array ? Place::kFirstChoice
                                                                               : Place::kOther;
    }
    if (parent.place == Place::kRoot) {
      if (key_ == "error" && !array) return Place::kError;
      if (key_ == "choices" && array) return Place::kChoices;
      if (key_ == "usage" && !array) return Place::kUsage;
      if (key_ == "gangway" && !array) return Place::kGangway;
    }
    if (parent.place == Place::kFirstChoice && !array) {
      if (key_ == "delta") return Place::kDelta;
      if (key_ == "gangway") return Place::kGangway;
    }
    return Place::kOther;
  }

  bool open(bool array) {
    if (static_cast<int>(stack_.size()) >= kMaxStreamChunkDepth) return false;
    const Place place = place_of_new_container(array);
    if (place == Place::kError) saw_error_object_ = true;
    stack_.push_back(Frame{place, array});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return value_done();
  }
  // A value ended: it counts as an element of the array it is in.
  bool value_done() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().elements;
    return true;
  }
  bool number(double value, int64_t whole) {
    const Place place = here();
    if (place == Place::kGangway) {
      if (key_ == "engine_ttft_ms") out_.engine_ttft_ms = value;
      if (key_ == "queue_ms") out_.queue_ms = value;
      if (key_ == "cached_prompt_tokens") out_.cached_prompt_tokens = whole;
    } else if (place == Place::kUsage && key_ == "completion_tokens") {
      out_.completion_tokens = whole;
    } else if (place == Place::kUsage && key_ == "prompt_tokens") {
      out_.prompt_tokens = whole;
    }
    return value_done();
  }

  StreamChunk& out_;
  bool keep_text_;
  std::vector<Frame> stack_;
  std::string key_;
  bool saw_error_object_ = false;
};

}  // namespace

StreamChunk parse_stream_chunk(std::string_view data, bool keep_text) {
  StreamChunk chunk;
  if (data == "[DONE]") {
    chunk.kind = StreamChunk::Kind::kDone;
    return chunk;
  }
  // Only an object is a chunk; checked first so that the reader's root is an object.
  const size_t first = data.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || data[first] != '{') return chunk;
  ChunkReader reader(chunk, keep_text);
  const bool parsed = nlohmann::json::sax_parse(data, &reader);
  if (!parsed) {
    StreamChunk invalid;
    return invalid;
  }
  chunk.kind = reader.saw_error_object() ? StreamChunk::Kind::kError : StreamChunk::Kind::kChunk;
  return chunk;
}

}  // namespace gangway
