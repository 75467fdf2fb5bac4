// gangway load's reading of a streamed answer on arbitrary bytes: the SSE splitter fed in
// pieces of every size the input's first bytes choose, and every event's data read as a chunk.
// Whatever the bytes, nothing may crash, and the same stream must give the same events however
// it is cut.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sse_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t piece = 1 + data[0] % 64;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);

  std::vector<std::string> whole_events;
  gangway::SseSplitter whole;
  whole.feed(stream, [&](std::string_view event) { whole_events.emplace_back(event); });

  std::vector<std::string> cut_events;
  gangway::SseSplitter cut;
  for (size_t at = 0; at < stream.size(); at += piece) {
    cut.feed(stream.substr(at, piece), [&](std::string_view event) {
      cut_events.emplace_back(event);
      (void)gangway::parse_stream_chunk(event);
    });
  }
  if (whole_events != cut_events) std::abort();  // cutting must not change the events
  (void)gangway::parse_stream_chunk(stream);
  return 0;
}
