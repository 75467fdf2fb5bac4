// The bytes both servers (gangway serve, gangway engine) put in front of an answer: the status
// line and headers of a complete response or of an event stream, and the chunk framing of a
// streamed body. Appended to the connection's pending output, so one write carries them with the
// first bytes of the body.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gangway {

// "HTTP/1.1 <status> <reason>", Server, Content-Type (if not empty), Content-Length,
// `extra_headers` (whole "Name: value\r\n" lines) and "Connection: close" unless `keep_alive`,
// then the blank line.
void append_response_head(std::string& out, int status, std::string_view server,
                          std::string_view content_type, size_t content_length,
                          std::string_view extra_headers, bool keep_alive);

// A 200 answer whose body is a server-sent event stream in chunked transfer encoding, with an
// X-Request-Id header when `request_id` is not empty.
void append_event_stream_head(std::string& out, std::string_view server,
                              std::string_view request_id, bool keep_alive);

// One chunk of a chunked body (size in hex, the data, CRLF); nothing for empty data, whose chunk
// would end the body.
void append_chunk(std::string& out, std::string_view data);

// The chunk that ends a chunked body.
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

}  // namespace gangway
