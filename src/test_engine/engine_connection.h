// One client connection of `gangway engine`: HTTP/1.1 requests one at a time (keep-alive), each
// routed to vLLM's endpoints (test_engine_server.h lists them in docs/engines.md), streamed
// answers as chunked Server-Sent Events.
//
// While a request generates (or a pause waits to take effect), a read stays posted on the socket
// so that a client that goes away is seen at once: its request is aborted in the engine. A
// request must arrive whole within kReadTimeout; headers over 64 KiB get 431, bodies over 16 MiB
// get 413, a malformed request 400, and the connection closes after each of them. Nothing a
// client sends can end the process: every handler runs under guarded().
#pragma once

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "batching/engine_request.h"
#include "http/connection_steps.h"
#include "test_engine/answer_renderer.h"
#include "test_engine/engine_api_error.h"
#include "test_engine/generation_parameters.h"

namespace gangway {

class TestEngineServer;

class EngineConnection : public std::enable_shared_from_this<EngineConnection> {
 public:
  static constexpr std::chrono::seconds kReadTimeout{60};
  static constexpr uint32_t kMaxHeaderBytes = 64 * 1024;
  static constexpr uint64_t kMaxBodyBytes = 16 * 1024 * 1024;

  EngineConnection(boost::asio::ip::tcp::socket socket, TestEngineServer& server);
  ~EngineConnection();

  void start();
  // An update of this connection's generating request.
  void on_update(const RequestUpdate& update);
  // The pause this connection asked for has taken effect.
  void on_pause_complete();
  // The server stops: close now (a request generating is aborted).
  void shut_down();

 private:
  friend struct ConnectionSteps;  // http/connection_steps.h

  enum class State : uint8_t { kReading, kGenerating, kPausing, kClosing, kClosed };
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

  // Runs one step of this connection's work (ConnectionSteps::guarded): an exception ends the
  // request with a 500 if no byte of the answer has left yet, else closes the connection.
  template <typename Step>
  void guarded(Step&& step) noexcept {
    ConnectionSteps::guarded(*this, std::forward<Step>(step));
  }
  void on_failure(std::string_view what);

  void read_request();
  void start_parse();
  void on_read(const boost::system::error_code& error);
  void watch();
  void on_watch(const boost::system::error_code& error, size_t bytes);
  void route();
  void start_generation(ApiEndpoint endpoint);
  void handle_update(const RequestUpdate& update);

  void respond(int status, std::string_view content_type, std::string_view body);
  void respond_error(const EngineApiError& error);
  void respond_detail(int status, std::string_view detail);
  void send_stream_headers();
  void send_chunk(std::string_view data);
  void end_response();
  void write_now();
  // A failed write or read: the request generating is aborted, the connection closed.
  void on_write_failed(const boost::system::error_code& error);
  void end_on_socket_error();
  void client_gone();
  // Half-closes, then closes once the client has closed too (http/connection_steps.h).
  void graceful_close();
  bool closing_is_done() const { return state_ == State::kClosed; }
  void close();

  boost::asio::ip::tcp::socket socket_;
  TestEngineServer& server_;
  State state_ = State::kReading;
  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  boost::asio::steady_timer read_timer_;
  bool watching_ = false;
  bool keep_alive_ = true;
  bool writing_ = false;
  bool close_after_write_ = false;
  std::string out_pending_;
  std::string out_writing_;

  // The request being generated.
  uint64_t request_id_ = 0;
  GenerationParameters generation_;
  std::optional<AnswerRenderer> renderer_;
  bool headers_sent_ = false;
  // Holds the connection while the engine works on its request (the server holds a weak_ptr).
  std::shared_ptr<EngineConnection> self_while_busy_;
};

}  // namespace gangway
