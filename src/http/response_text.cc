#include "http/response_text.h"

#include <fmt/format.h>

#include <iterator>

#include "http/http_status.h"

namespace gangway {

void append_response_head(std::string& out, int status, std::string_view server,
                          std::string_view content_type, size_t content_length,
                          std::string_view extra_headers, bool keep_alive) {
  auto sink = std::back_inserter(out);
  fmt::format_to(sink, "HTTP/1.1 {} {}\r\nServer: {}\r\n", status, http_status_text(status),
                 server);
  if (!content_type.empty()) fmt::format_to(sink, "Content-Type: {}\r\n", content_type);
  fmt::format_to(sink, "Content-Length: {}\r\n{}{}\r\n", content_length, extra_headers,
                 keep_alive ? "" : "Connection: close\r\n");
}

void append_event_stream_head(std::string& out, std::string_view server,
                              std::string_view request_id, bool keep_alive) {
  auto sink = std::back_inserter(out);
  fmt::format_to(sink,
                 "HTTP/1.1 200 OK\r\nServer: {}\r\nContent-Type: text/event-stream; "
                 "charset=utf-8\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n",
                 server);
  if (!request_id.empty()) fmt::format_to(sink, "X-Request-Id: {}\r\n", request_id);
  out.append(keep_alive ? "\r\n" : "Connection: close\r\n\r\n");
}

void append_chunk(std::string& out, std::string_view data) {
  if (data.empty()) return;
  char size[20];
  const auto result = fmt::format_to_n(size, sizeof size, "{:x}\r\n", data.size());
  out.append(size, result.size);
  out.append(data);
  out.append("\r\n");
}

}  // namespace gangway
