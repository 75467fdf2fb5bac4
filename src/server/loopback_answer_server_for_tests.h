// Test support for gangway's HTTP clients (the engine proxy's upstream call, gangway load), for
// their tests and fuzz targets: the bytes of a streamed (chunked SSE) answer, and a loopback
// server that answers with given bytes. Header-only (the *_for_tests.h suffix keeps the layering
// test from counting it).
#pragma once

#include <fmt/format.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace gangway {

// The head of a 200 answer whose body is an SSE stream in chunks; each of `extra_headers` ends
// with CRLF.
inline std::string streamed_answer_head(std::string_view extra_headers = "") {
  return fmt::format(
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n{}\r\n",
      extra_headers);
}

// One chunk carrying the SSE event `data: DATA`, its lines ended by `line_end`.
inline std::string streamed_event_chunk(std::string_view data, std::string_view line_end = "\n") {
  const std::string event = fmt::format("data: {}{}{}", data, line_end, line_end);
  return fmt::format("{:x}\r\n{}\r\n", event.size(), event);
}

// A whole streamed answer: the head, one chunk per event's data, the last chunk.
inline std::string streamed_answer(const std::vector<std::string>& events,
                                   std::string_view extra_headers = "",
                                   std::string_view line_end = "\n") {
  std::string answer = streamed_answer_head(extra_headers);
  for (const std::string& data : events) answer += streamed_event_chunk(data, line_end);
  return answer + "0\r\n\r\n";
}

// A loopback HTTP server that answers one request per serve() with the bytes it is given, as they
// are, so that the client reads them through its real socket path (its own parser, read loop and
// buffers). It reads the whole request first, writes the bytes, half-closes, and then waits for
// the client to close, so that the client always sees the bytes and then the end of the stream
// (never a reset): every exchange ends without a timeout.
class LoopbackAnswerServer {
 public:
  LoopbackAnswerServer() : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {}

  uint16_t port() const { return acceptor_.local_endpoint().port(); }

  // Serves one connection on a thread of its own: accept, read one request, answer `bytes`.
  // join() waits for it.
  void serve(std::string_view bytes) {
    answer_.assign(bytes);
    thread_ = std::thread([this] { serve_one(); });
  }
  void join() { thread_.join(); }
  ~LoopbackAnswerServer() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  void serve_one() {
    namespace http = boost::beast::http;
    boost::asio::ip::tcp::socket socket(io_);
    boost::system::error_code error;
    acceptor_.accept(socket, error);
    if (error) return;
    boost::beast::flat_buffer buffer;
    http::request<http::string_body> request;
    http::read(socket, buffer, request, error);
    if (error) return;
    boost::asio::write(socket, boost::asio::buffer(answer_), error);
    socket.shutdown(boost::asio::ip::tcp::socket::shutdown_send, error);
    // Until the client closes (a client that stops reading early resets: also an end).
    char sink[4096];
    while (!error) socket.read_some(boost::asio::buffer(sink), error);
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::string answer_;
  std::thread thread_;
};

}  // namespace gangway
