// One client connection of `gangway serve`: reads HTTP/1.1 requests one at a time (keep-alive,
// Expect: 100-continue), routes them, and writes the answers, streaming ones as chunked SSE.
//
// Lives on one network thread; every method runs there. A generation request goes to the
// scheduler loop (SchedulerLoop::submit) with a StreamSink, and the loop's StreamEvents come
// back through on_event(); the status line is sent with the first token, so a request the
// scheduler rejects or drops before its first token gets a real 429/503 instead of an error
// inside a 200 stream.
//
// Protection, all limits from ServerConfig:
//  - a request must arrive whole within read_timeout (else 408 and close; an idle kept-alive
//    connection is just closed), headers within max_header_bytes (else 431), the body within
//    max_body_bytes (else 413); nothing reaches the scheduler before that, so a stalled client
//    holds no scheduler slot;
//  - while a request is generating, a read stays posted so that a client that goes away is seen
//    at once and its request cancelled (its KV freed by the core);
//  - unsent output is bounded (max_output_buffer_bytes) and a write must finish within
//    write_stall_timeout: a reader too slow for too long is cut off, its request cancelled and
//    the reason logged. Other connections never wait for it: every write is asynchronous.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "http/connection_steps.h"
#include "server/connection_admission.h"
#include "server/engine_stream.h"
#include "server/openai_request.h"
#include "server/openai_response.h"
#include "server/request_router.h"
#include "server/scheduler_loop.h"
#include "server/stream_event.h"

namespace gangway {

struct ServerContext;

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  using Registry = std::unordered_map<uint64_t, std::weak_ptr<HttpConnection>>;

  HttpConnection(boost::asio::ip::tcp::socket socket, ServerContext& context, size_t thread,
                 uint64_t id, Registry& registry, boost::asio::ip::address client,
                 ConnectionClass connection_class);
  ~HttpConnection();

  void start();
  // An event of this connection's current request (ignored if it is stale). Streamed tokens are
  // only appended to the pending output: when this returns true the caller must call
  // flush_output() once it has handed over the rest of its batch of events, so that the tokens
  // of one batch (one or more scheduler iterations) leave in one write.
  bool on_event(StreamEvent& event);
  // Writes the output that on_event() left pending.
  void flush_output();
  // Server shutdown: close now if idle, else once the current answer is written.
  void shutdown();
  // Cuts the client off if a write has been pending longer than write_stall_timeout (called by
  // the network thread's periodic sweep).
  void check_write_stall(std::chrono::steady_clock::time_point now);

 private:
  friend struct ConnectionSteps;  // http/connection_steps.h

  enum class State : uint8_t { kReading, kProcessing, kGenerating, kClosing, kClosed };
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

  // Runs one step of this connection's work (ConnectionSteps::guarded). An exception from it
  // ends this connection's request only: the client gets a 500 if no byte of the answer has left
  // yet (else the connection is closed), the request is cancelled in the scheduler if it had
  // reached it, and the error is logged.
  template <typename Step>
  void guarded(Step&& step) noexcept {
    ConnectionSteps::guarded(*this, std::forward<Step>(step));
  }
  void on_failure(std::string_view what);
  bool handle_event(StreamEvent& event);
  void finish_answer(const FinishedRequest& finished, RequestId id);
  // Request-level mode: the request goes to an engine process (engine_stream.h).
  void start_engine_stream(RequestId id, const UpstreamTarget& target);
  void on_engine_text(std::string_view text, int32_t tokens);
  void on_engine_end(const EngineStreamEnd& end);
  void abort_engine_stream();

  void open();
  void cut_off_if_write_stalled(std::chrono::steady_clock::time_point now);
  void read_request();
  void start_parse();
  void on_header(const boost::system::error_code& error);
  void on_body(const boost::system::error_code& error);
  void on_read_error(const boost::system::error_code& error);
  void on_read_timeout();
  // The request's first bytes are in the buffer: its header timeout starts.
  void begin_request();
  void arm_read_timer(std::chrono::steady_clock::time_point deadline);
  void wait_for_request();
  // Over a connection limit: only probes are answered (connection_admission.h).
  bool in_reserve() const { return connection_class_ != ConnectionClass::kServed; }
  void release_admission();
  void on_request();
  void route();
  void start_generation(Endpoint endpoint, GenerationRequest& generation);
  void watch_for_disconnect();
  void on_watch(const boost::system::error_code& error, size_t bytes);

  void respond(int status, std::string_view content_type, std::string_view body,
               std::string_view extra_headers = {});
  void respond_error(const ApiError& error, std::string_view extra_headers = {});
  void send_stream_headers();
  // Frames `data` as one HTTP chunk and appends it to the pending output; writes it now if
  // `flush` (else it waits for flush_output() or the next write). Cuts the client off when the
  // unsent output goes over max_output_buffer_bytes.
  void send_chunk(std::string_view data, bool flush = true);
  void end_response();
  // Appends `data` to the pending output and writes it now (with whatever else is pending).
  void send(std::string_view data);
  // Writes the pending output now unless a write is in flight: one non-blocking send() first,
  // and only what the kernel did not take goes through an asynchronous write.
  void write_now();
  void start_write();
  void on_write_failed(const boost::system::error_code& error);
  void client_gone(std::string_view reason);
  // Half-closes, then closes once the client has closed too (http/connection_steps.h).
  void graceful_close();
  bool closing_is_done() const { return state_ == State::kClosed; }
  void close();

  boost::asio::ip::tcp::socket socket_;
  ServerContext& context_;
  const size_t thread_;
  const uint64_t id_;
  Registry& registry_;
  const boost::asio::ip::address client_;
  const ConnectionClass connection_class_;
  bool admission_released_ = false;
  // When the first byte of the request being read arrived (the header and read timeouts count
  // from it); empty while a kept-alive connection waits idle.
  std::optional<std::chrono::steady_clock::time_point> request_started_;
  // The client shut down its sending side (a half-close): the answer still goes out, and the
  // connection closes after it.
  bool client_done_sending_ = false;
  State state_ = State::kReading;
  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  boost::asio::steady_timer read_timer_;
  std::chrono::steady_clock::time_point write_started_;
  bool read_timed_out_ = false;
  bool watching_ = false;
  bool keep_alive_ = true;
  bool close_after_write_ = false;
  bool writing_ = false;        // an asynchronous write is in flight
  bool flush_queued_ = false;   // on_event() returned true; flush_output() is due
  bool direct_writes_ = false;  // the socket is non-blocking: write_now() may send() at once
  std::string out_pending_;
  std::string out_writing_;
  std::string scratch_;

  // The request being answered.
  std::shared_ptr<StreamSink> sink_;
  std::string reply_content_type_;
  Endpoint endpoint_ = Endpoint::kCompletions;
  bool stream_ = false;
  bool include_usage_ = false;
  std::string model_name_;
  int64_t created_unix_s_ = 0;
  std::optional<AnswerFormatter> formatter_;
  bool headers_sent_ = false;
  int32_t tokens_flushed_ = 0;  // output length when a write was last started
  // Request-level mode: the body for the engine, the call to it, and what it said.
  bool proxied_ = false;
  std::string upstream_body_;
  std::unique_ptr<EngineStream> engine_stream_;
  uint16_t engine_ = 0;
  RequestId proxied_id_;
  std::string engine_text_;  // a non-streamed answer's text
  bool engine_text_started_ = false;
  std::optional<int32_t> engine_prompt_tokens_;
  std::string engine_error_;
  // Holds the connection while the scheduler works on its request: the loop's events reach it
  // only through a weak_ptr, and no I/O may be pending meanwhile (a pipelined next request).
  std::shared_ptr<HttpConnection> keep_alive_while_answering_;
};

}  // namespace gangway
