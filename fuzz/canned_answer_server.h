// A loopback HTTP server for the fuzz targets of gangway's HTTP clients (the engine proxy's
// upstream call, gangway load): it answers one request per serve() with the fuzzer's bytes, as
// they are, so that the client reads them through its real socket path (its own parser, read
// loop and buffers). The server reads the whole request first, writes the bytes, half-closes,
// and then waits for the client to close, so that the client always sees the bytes and then
// the end of the stream (never a reset): every exchange ends without a timeout.
#pragma once

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

namespace gangway::fuzz {

class CannedAnswerServer {
 public:
  CannedAnswerServer() : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {}

  uint16_t port() const { return acceptor_.local_endpoint().port(); }

  // Serves one connection on a thread of its own: accept, read one request, answer `bytes`.
  // join() waits for it.
  void serve(std::string_view bytes) {
    answer_.assign(bytes);
    thread_ = std::thread([this] { serve_one(); });
  }
  void join() { thread_.join(); }

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

}  // namespace gangway::fuzz
