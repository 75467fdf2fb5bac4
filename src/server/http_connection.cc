// One client connection (server/http_connection.h). Longer than most files because it is one
// state machine: reading a request, answering it and streaming its events share the
// connection's buffers, timers and limits, and each step's error path ends the same way. The
// request bodies are parsed in openai_request, the routes in request_router, the answers'
// bodies built in openai_response and api_error.

#include "server/http_connection.h"

#include <fmt/format.h>

#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <chrono>
#include <nlohmann/json.hpp>

#include "http/beast_text.h"
#include "http/connection_steps.h"
#include "http/http_status.h"
#include "http/response_text.h"
#include "server/client_text.h"
#include "server/http_server.h"
#include "server/upstream_body.h"

namespace gangway {
namespace {

namespace http = boost::beast::http;
namespace asio = boost::asio;
using boost::system::error_code;

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

// How long a probe-reserve connection may take to send its one request.
constexpr Duration kReserveTimeout = std::chrono::seconds(1);

int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

HttpConnection::HttpConnection(asio::ip::tcp::socket socket, ServerContext& context, size_t thread,
                               uint64_t id, Registry& registry, asio::ip::address client,
                               ConnectionClass connection_class)
    : socket_(std::move(socket)),
      context_(context),
      thread_(thread),
      id_(id),
      registry_(registry),
      client_(std::move(client)),
      connection_class_(connection_class),
      read_timer_(socket_.get_executor()) {}

HttpConnection::~HttpConnection() {
  release_admission();
}

void HttpConnection::release_admission() {
  if (admission_released_) return;
  admission_released_ = true;
  context_.admission->release(client_, connection_class_);
}

void HttpConnection::start() {
  guarded([&] { open(); });
}

void HttpConnection::open() {
  context_.counters->open_connections.fetch_add(1, std::memory_order_relaxed);
  context_.counters->connections_total.fetch_add(1, std::memory_order_relaxed);
  if (in_reserve()) {
    context_.counters->reserve_connections_total.fetch_add(1, std::memory_order_relaxed);
    keep_alive_ = false;  // one request each
  }
  registry_[id_] = weak_from_this();
  error_code ignored;
  // Streamed tokens are small writes that must leave at once (no Nagle delay); coalescing is done
  // here instead (one write per connection per batch of scheduler events).
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  // Writes are first tried with a non-blocking send() on this thread (write_now).
  error_code non_blocking;
  socket_.non_blocking(true, non_blocking);
  direct_writes_ = !non_blocking;
  socket_.set_option(asio::socket_base::send_buffer_size(
                         static_cast<int>(context_.config->socket_send_buffer_bytes)),
                     ignored);
  read_request();
}

void HttpConnection::read_request() {
  state_ = State::kReading;
  read_timed_out_ = false;
  request_started_.reset();
  // An idle kept-alive connection waits up to read_timeout for its next request; a reserve
  // connection has one short chance to ask for a probe.
  arm_read_timer(std::chrono::steady_clock::now() +
                 (in_reserve() ? std::min<Duration>(context_.config->read_timeout, kReserveTimeout)
                               : context_.config->read_timeout));
  // A read posted to watch for disconnects is still pending: its completion starts parsing.
  if (watching_) return;
  if (buffer_.size() == 0) {
    if (context_.shutting_down.load(std::memory_order_relaxed) || client_done_sending_) {
      close();
      return;
    }
    wait_for_request();
    return;
  }
  begin_request();
  start_parse();
}

// The first bytes of the next request are awaited with a plain read, so that the header
// timeout can start when they arrive rather than when the connection went idle.
void HttpConnection::wait_for_request() {
  ConnectionSteps::watch_for_bytes(shared_from_this());
}

void HttpConnection::begin_request() {
  const auto now = std::chrono::steady_clock::now();
  request_started_ = now;
  Duration header_timeout = context_.config->header_timeout;
  if (in_reserve()) header_timeout = std::min<Duration>(header_timeout, kReserveTimeout);
  arm_read_timer(now + header_timeout);
}

void HttpConnection::arm_read_timer(std::chrono::steady_clock::time_point deadline) {
  read_timer_.expires_at(deadline);
  read_timer_.async_wait([self = shared_from_this()](const error_code& error) {
    if (!error) self->guarded([&] { self->on_read_timeout(); });
  });
}

void HttpConnection::start_parse() {
  parser_.emplace();
  parser_->header_limit(static_cast<uint32_t>(context_.config->max_header_bytes));
  parser_->body_limit(static_cast<uint64_t>(context_.config->max_body_bytes));
  http::async_read_header(socket_, buffer_, *parser_,
                          [self = shared_from_this()](const error_code& error, size_t) {
                            self->guarded([&] { self->on_header(error); });
                          });
}

void HttpConnection::on_header(const error_code& error) {
  if (state_ != State::kReading) return;
  if (error) {
    on_read_error(error);
    return;
  }
  const auto& request = parser_->get();
  const auto expect = request[http::field::expect];
  if (!parser_->is_done() &&
      starts_with_ignoring_case(std::string_view(expect.data(), expect.size()), "100-continue")) {
    send("HTTP/1.1 100 Continue\r\n\r\n");
  }
  if (parser_->is_done()) {
    on_request();
    return;
  }
  // The headers are in: the rest of the whole request's time is the body's.
  if (request_started_ && !in_reserve()) {
    arm_read_timer(*request_started_ + context_.config->read_timeout);
  }
  http::async_read(socket_, buffer_, *parser_,
                   [self = shared_from_this()](const error_code& e, size_t) {
                     self->guarded([&] { self->on_body(e); });
                   });
}

void HttpConnection::on_body(const error_code& error) {
  if (state_ != State::kReading) return;
  if (error) {
    on_read_error(error);
    return;
  }
  on_request();
}

void HttpConnection::on_read_error(const error_code& error) {
  if (error == asio::error::operation_aborted) return;  // the read timer or a shutdown
  read_timer_.cancel();
  keep_alive_ = false;
  state_ = State::kProcessing;
  if (error == http::error::header_limit) {
    respond_error(ApiError::request_error(
        431, "header_too_large",
        fmt::format("The request's headers exceed {} bytes.", context_.config->max_header_bytes)));
  } else if (error == http::error::body_limit) {
    respond_error(ApiError::request_error(
        413, "body_too_large",
        fmt::format("The request body exceeds {} bytes.", context_.config->max_body_bytes)));
  } else if (error == http::error::end_of_stream || error == http::error::partial_message ||
             error == asio::error::eof || error == asio::error::connection_reset ||
             error == asio::error::broken_pipe) {
    if (parser_ && parser_->got_some()) {
      context_.log->debug("request_incomplete", {{"conn", id_}, {"error", error.message()}});
    }
    close();
  } else if (error.category() == make_error_code(http::error::bad_target).category()) {
    respond_error(ApiError::request_error(
        400, "bad_http_request", "The request is not valid HTTP/1.1: " + error.message() + "."));
  } else {
    close();
  }
}

void HttpConnection::on_read_timeout() {
  if (state_ != State::kReading) return;
  read_timed_out_ = true;
  const bool partial = buffer_.size() > 0 || (parser_ && parser_->got_some());
  error_code ignored;
  socket_.cancel(ignored);
  if (!partial) {
    close();  // an idle kept-alive connection
    return;
  }
  context_.counters->read_timeouts_total.fetch_add(1, std::memory_order_relaxed);
  const bool headers_in = parser_ && parser_->is_header_done();
  const std::string timeout =
      seconds_text(headers_in || !request_started_ ? context_.config->read_timeout
                                                   : context_.config->header_timeout);
  context_.log->warn("request_timeout",
                     {{"conn", id_},
                      {"timeout_s", timeout},
                      {"reason", headers_in ? "the request did not arrive whole in time"
                                            : "the request's headers did not arrive in time"}});
  keep_alive_ = false;
  state_ = State::kProcessing;
  respond_error(ApiError::request_error(
      408, "request_timeout",
      headers_in ? fmt::format("The request did not arrive whole within {} s.", timeout)
                 : fmt::format("The request's headers did not arrive within {} s.", timeout)));
}

void HttpConnection::on_request() {
  read_timer_.cancel();
  state_ = State::kProcessing;
  keep_alive_ = parser_->get().keep_alive() && !context_.shutting_down.load() && !in_reserve() &&
                !client_done_sending_;
  if (context_.log->enabled(LogLevel::kDebug)) {
    const auto& request = parser_->get();
    context_.log->debug("request", {{"conn", id_},
                                    {"method", shown_client_text(as_view(request.method_string()))},
                                    {"target", shown_client_text(as_view(request.target()), 512)},
                                    {"body_bytes", request.body().size()},
                                    {"buffered_bytes", buffer_.size()}});
  }
  route();
}

void HttpConnection::route() {
  RouterContext router;
  router.node = &context_.scenario->node;
  router.api = &context_.api;
  router.config = context_.config;
  router.models_body = &context_.models_body;
  router.draining = context_.draining.load(std::memory_order_relaxed);
  router.connection_class = connection_class_;
  RoutedRequest routed = route_request(parser_->get(), router);
  switch (routed.kind) {
    case RoutedRequest::Kind::kAnswer:
      if (routed.close_connection) keep_alive_ = false;
      respond(routed.status, routed.content_type, routed.body, routed.extra_headers);
      return;
    case RoutedRequest::Kind::kQuery:
      if (routed.query == LoopQuery::kHealth) {  // never waits for the scheduler's thread
        const SchedulerLoop::HealthAnswer health = context_.loop->health();
        respond(health.status, routed.content_type, health.body, {});
        return;
      }
      reply_content_type_ = std::move(routed.content_type);
      sink_ = std::make_shared<StreamSink>(thread_, weak_from_this());
      state_ = State::kGenerating;
      keep_alive_while_answering_ = shared_from_this();
      context_.loop->query(routed.query, sink_);
      watch_for_disconnect();
      return;
    case RoutedRequest::Kind::kGenerate:
      start_generation(routed.endpoint, routed.generation);
      return;
  }
}

void HttpConnection::start_generation(Endpoint endpoint, GenerationRequest& generation) {
  endpoint_ = endpoint;
  stream_ = generation.stream;
  include_usage_ = generation.include_usage;
  model_name_ = context_.scenario->node.model(generation.model).name;
  created_unix_s_ = unix_seconds();
  formatter_.reset();
  headers_sent_ = false;
  tokens_flushed_ = 0;
  sink_ = std::make_shared<StreamSink>(thread_, weak_from_this());

  Submission submission;
  submission.sink = sink_;
  RequestSpec& spec = submission.spec;
  spec.model = generation.model;
  spec.slo_class = generation.slo_class;
  spec.tenant = generation.tenant;
  spec.prompt_tokens = generation.prompt_tokens;
  spec.max_tokens = generation.max_tokens;
  spec.prefix_blocks = std::move(generation.prefix_blocks);
  submission.ignore_eos = generation.ignore_eos;
  submission.min_tokens = generation.min_tokens;
  submission.relative_ttft_deadline = generation.ttft_deadline;
  proxied_ = context_.config->engines.real();
  engine_text_.clear();
  engine_text_started_ = false;
  engine_prompt_tokens_.reset();
  engine_error_.clear();
  engine_stream_.reset();
  if (proxied_) {
    upstream_body_ = make_upstream_body(
        parser_->get().body(),
        context_.config->engines.models[generation.model.value()].served_model_name);
  }
  state_ = State::kGenerating;
  keep_alive_while_answering_ = shared_from_this();
  context_.loop->submit(std::move(submission));
  // The request body is no longer needed; free it before a long stream.
  parser_.reset();
  watch_for_disconnect();
}

void HttpConnection::watch_for_disconnect() {
  // With a pipelined request already buffered the client is there, and the next parse must be
  // able to start as soon as this answer is out. After a half-close there is nothing to read.
  if (watching_ || state_ == State::kClosed || buffer_.size() > 0 || client_done_sending_) return;
  ConnectionSteps::watch_for_bytes(shared_from_this());
}

void HttpConnection::on_watch(const error_code& error, size_t bytes) {
  watching_ = false;
  if (state_ == State::kClosed) return;
  if (state_ == State::kClosing) {
    // Half-closed: discard what the client still sends until it closes too.
    if (error) {
      close();
    } else {
      buffer_.commit(bytes);
      buffer_.consume(buffer_.size());
      watch_for_disconnect();
    }
    return;
  }
  if (error) {
    if (state_ == State::kGenerating && error == asio::error::eof) {
      // The client has sent all it will (shutdown(SHUT_WR), as some HTTP/1.0 clients do, or a
      // full close, which looks the same from here): the answer still goes out, and a client
      // that is really gone shows up as a failed write (a streamed answer's next token).
      client_done_sending_ = true;
      keep_alive_ = false;
      context_.log->debug("client_done_sending", {{"conn", id_}});
    } else if (state_ == State::kGenerating) {
      client_gone(error.message());
    } else if (state_ == State::kReading && error != asio::error::operation_aborted) {
      close();
    }
    return;
  }
  buffer_.commit(bytes);
  if (state_ == State::kReading) {
    begin_request();
    start_parse();
    return;
  }
  // Bytes of a pipelined next request wait in the buffer, and no read stays posted so that the
  // next parse can start at once; a client that goes away meanwhile shows up as a failed write.
}

bool HttpConnection::on_event(StreamEvent& event) {
  bool flush = false;
  guarded([&] { flush = handle_event(event); });
  return flush;
}

bool HttpConnection::handle_event(StreamEvent& event) {
  if (state_ != State::kGenerating || event.sink != sink_.get()) return false;
  switch (event.kind) {
    case StreamEvent::Kind::kDispatch:
      start_engine_stream(event.id, event.payload->upstream);
      return false;
    case StreamEvent::Kind::kAbort:
      abort_engine_stream();
      return false;
    case StreamEvent::Kind::kReply:
      respond(event.payload->reply_status, reply_content_type_, event.payload->reply_body);
      return false;
    case StreamEvent::Kind::kToken: {
      if (!stream_) return false;  // counted by the scheduler; the whole text goes out at the end
      if (!formatter_) formatter_.emplace(endpoint_, event.id, created_unix_s_, model_name_);
      if (!headers_sent_) send_stream_headers();
      scratch_.clear();
      formatter_->append_token_event(scratch_, event.tokens_after - 1);
      send_chunk(scratch_, /*flush=*/false);
      if (state_ != State::kGenerating) return false;  // cut off: output buffer over its limit
      // The first token goes out at once; later ones every stream_interval_tokens (vLLM's
      // stream_interval: fewer writes for the same tokens; 1 sends each as it comes). "At once"
      // is at the end of the batch being delivered (flush_output), so that every token of this
      // connection in the batch, and the status line with the first, leave in one write.
      const bool flush = event.tokens_after == 1 || event.tokens_after - tokens_flushed_ >=
                                                        context_.config->stream_interval_tokens;
      if (!flush) return false;
      tokens_flushed_ = event.tokens_after;
      if (flush_queued_) return false;
      flush_queued_ = true;
      return true;
    }
    case StreamEvent::Kind::kFinished:
      finish_answer(event.payload->finished, event.id);
      return false;
  }
  return false;
}

void HttpConnection::finish_answer(const FinishedRequest& reported, RequestId id) {
  if (!formatter_) formatter_.emplace(endpoint_, id, created_unix_s_, model_name_);
  FinishedRequest finished = reported;
  if (proxied_) {
    abort_engine_stream();
    // The engine's own count of the prompt (its tokenizer, its chat template).
    if (engine_prompt_tokens_) finished.prompt_tokens = *engine_prompt_tokens_;
  }
  if (finished.outcome == Outcome::kCompleted) {
    if (!stream_) {
      respond(200, "application/json",
              formatter_->full_answer(finished, proxied_ ? &engine_text_ : nullptr),
              fmt::format("X-Request-Id: {}\r\n", formatter_->response_id()));
      return;
    }
    if (!headers_sent_) send_stream_headers();
    scratch_.clear();
    formatter_->append_finish_events(scratch_, finished, include_usage_);
    // Tokens still pending, the finish events and the last chunk leave in one write.
    send_chunk(scratch_, /*flush=*/false);
    if (state_ != State::kGenerating) return;  // cut off: output buffer over its limit
    send(kLastChunk);
    end_response();
    return;
  }
  ApiError error = error_for_reason(finished.reason, finished.retry_after_s);
  // What the engine said, when it was the engine that ended the request.
  if (proxied_ && !engine_error_.empty() &&
      (finished.reason == Reason::kEngineFailed || finished.reason == Reason::kBadRequest)) {
    error.message = engine_error_;
  }
  if (stream_ && headers_sent_) {
    scratch_.clear();
    AnswerFormatter::append_error_event(scratch_, error_body(error));
    send_chunk(scratch_, /*flush=*/false);
    if (state_ != State::kGenerating) return;
    send(kLastChunk);
    end_response();
    return;
  }
  respond_error(error);
}

void HttpConnection::start_engine_stream(RequestId id, const UpstreamTarget& target) {
  proxied_id_ = id;
  engine_ = target.engine;
  UpstreamRequest request;
  request.host = target.host;
  request.port = target.port;
  request.target =
      endpoint_ == Endpoint::kChatCompletions ? "/v1/chat/completions" : "/v1/completions";
  request.body = std::move(upstream_body_);
  upstream_body_.clear();
  request.idle_timeout = target.idle_timeout;
  const std::weak_ptr<HttpConnection> weak = weak_from_this();
  EngineStream::Handlers handlers;
  handlers.on_text = [weak](std::string_view text, int32_t tokens) {
    if (const auto self = weak.lock()) self->guarded([&] { self->on_engine_text(text, tokens); });
  };
  handlers.on_end = [weak](const EngineStreamEnd& end) {
    if (const auto self = weak.lock()) self->guarded([&] { self->on_engine_end(end); });
  };
  engine_stream_ = std::make_unique<EngineStream>(socket_.get_executor(), std::move(request),
                                                  std::move(handlers));
}

void HttpConnection::on_engine_text(std::string_view text, int32_t tokens) {
  if (state_ != State::kGenerating || !sink_) return;
  context_.loop->engine_text(proxied_id_, tokens);
  if (!stream_) {
    engine_text_.append(text);
    return;
  }
  if (!formatter_) formatter_.emplace(endpoint_, proxied_id_, created_unix_s_, model_name_);
  if (!headers_sent_) send_stream_headers();
  scratch_.clear();
  formatter_->append_text_event(scratch_, text, !engine_text_started_);
  engine_text_started_ = true;
  send_chunk(scratch_);
}

void HttpConnection::on_engine_end(const EngineStreamEnd& end) {
  if (end.prompt_tokens) engine_prompt_tokens_ = end.prompt_tokens;
  if (end.outcome != Outcome::kCompleted) engine_error_ = end.message;
  // The answer is finished when the scheduler's record comes back (kFinished).
  context_.loop->engine_end(proxied_id_, engine_, end);
}

void HttpConnection::abort_engine_stream() {
  if (!engine_stream_) return;
  engine_stream_->abort();
  engine_stream_.reset();
}

void HttpConnection::flush_output() {
  flush_queued_ = false;
  if (state_ == State::kClosed) return;
  guarded([&] { write_now(); });
}

void HttpConnection::respond(int status, std::string_view content_type, std::string_view body,
                             std::string_view extra_headers) {
  if (state_ == State::kClosed) return;
  context_.counters->count_response(status);
  scratch_.clear();
  append_response_head(scratch_, status, "gangway", content_type, body.size(), extra_headers,
                       keep_alive_);
  scratch_.append(body);
  send(scratch_);
  end_response();
}

void HttpConnection::respond_error(const ApiError& error, std::string_view extra_headers) {
  std::string headers(extra_headers);
  if (error.retry_after_s) headers += fmt::format("Retry-After: {}\r\n", *error.retry_after_s);
  respond(error.status, "application/json", error_body(error), headers);
}

void HttpConnection::send_stream_headers() {
  // Only appended: the status line leaves with the first event (in the same write).
  headers_sent_ = true;
  context_.counters->count_response(200);
  append_event_stream_head(out_pending_, "gangway", formatter_->response_id(), keep_alive_);
}

void HttpConnection::send_chunk(std::string_view data, bool flush) {
  if (data.empty()) return;
  append_chunk(out_pending_, data);
  const size_t unsent = out_pending_.size() + out_writing_.size();
  if (unsent > static_cast<size_t>(context_.config->max_output_buffer_bytes)) {
    context_.counters->slow_readers_cut_total.fetch_add(1, std::memory_order_relaxed);
    context_.log->warn("slow_reader_cut",
                       {{"conn", id_},
                        {"unsent_bytes", unsent},
                        {"limit_bytes", context_.config->max_output_buffer_bytes},
                        {"reason", "output buffer over its limit"}});
    client_gone("output buffer over its limit");
    return;
  }
  if (flush) write_now();
}

void HttpConnection::end_response() {
  // The handlers of the reads, writes and timers posted below keep the connection alive now.
  const auto self = std::move(keep_alive_while_answering_);
  sink_.reset();
  formatter_.reset();
  parser_.reset();
  if (!keep_alive_) {
    state_ = State::kClosing;
    close_after_write_ = true;
    if (!writing_) graceful_close();
    return;
  }
  read_request();
}

void HttpConnection::send(std::string_view data) {
  if (state_ == State::kClosed) return;
  out_pending_.append(data);
  write_now();
}

void HttpConnection::write_now() {
  if (writing_ || out_pending_.empty() || state_ == State::kClosed) return;
  if (direct_writes_) {
    // The common case: the kernel takes it all, and no asynchronous operation, completion
    // handler or reactor registration is needed (one send() syscall per write). Errors and a
    // full send buffer (would_block, or a part taken) go on through the asynchronous write below,
    // which reports errors to on_write_failed() and waits for the socket to be writable.
    error_code error;
    context_.counters->client_writes_total.fetch_add(1, std::memory_order_relaxed);
    const size_t written = socket_.write_some(asio::buffer(out_pending_), error);
    if (!error && written == out_pending_.size()) {
      out_pending_.clear();
      return;
    }
    if (!error && written > 0) out_pending_.erase(0, written);
  }
  start_write();
}

void HttpConnection::start_write() {
  context_.counters->client_writes_total.fetch_add(1, std::memory_order_relaxed);
  context_.counters->client_writes_waited_total.fetch_add(1, std::memory_order_relaxed);
  // No timer per write (two more handlers for every token): the network thread's sweep
  // (check_write_stall) looks at when the write started.
  write_started_ = std::chrono::steady_clock::now();
  ConnectionSteps::start_async_write(shared_from_this());
}

void HttpConnection::on_write_failed(const error_code& error) {
  if (sink_) {
    client_gone("write failed: " + error.message());
  } else {
    close();
  }
}

void HttpConnection::check_write_stall(std::chrono::steady_clock::time_point now) {
  guarded([&] { cut_off_if_write_stalled(now); });
}

void HttpConnection::cut_off_if_write_stalled(std::chrono::steady_clock::time_point now) {
  if (!writing_ || state_ == State::kClosed) return;
  if (now - write_started_ < context_.config->write_stall_timeout) return;
  context_.counters->slow_readers_cut_total.fetch_add(1, std::memory_order_relaxed);
  context_.log->warn("slow_reader_cut",
                     {{"conn", id_},
                      {"unsent_bytes", out_pending_.size() + out_writing_.size()},
                      {"stall_s", seconds_text(context_.config->write_stall_timeout)},
                      {"reason", "a write did not finish in time"}});
  if (sink_) {
    client_gone("client stopped reading");
  } else {
    close();
  }
}

void HttpConnection::client_gone(std::string_view reason) {
  // The engine learns at once (its connection closes and it aborts the request).
  abort_engine_stream();
  if (sink_) {
    context_.counters->client_disconnects_total.fetch_add(1, std::memory_order_relaxed);
    context_.log->debug("client_gone", {{"conn", id_}, {"reason", reason}});
    context_.loop->cancel(std::move(sink_));
    sink_.reset();
  }
  close();
}

void HttpConnection::shutdown() {
  keep_alive_ = false;
  if (state_ == State::kReading) guarded([&] { close(); });
}

void HttpConnection::on_failure(std::string_view what) {
  context_.counters->connection_errors_total.fetch_add(1, std::memory_order_relaxed);
  context_.log->error("connection_error",
                      {{"conn", id_},
                       {"error", shown_client_text(what, 512)},
                       {"action", "the request ends here; the server goes on"}});
  if (state_ == State::kClosed) return;
  abort_engine_stream();
  // A request the scheduler holds ends there too (it counts as cancelled).
  if (sink_) context_.loop->cancel(std::move(sink_));
  sink_.reset();
  const bool answer_started = headers_sent_ || writing_ || !out_pending_.empty();
  if (state_ == State::kClosing || answer_started) {
    close();
    return;
  }
  keep_alive_ = false;
  state_ = State::kProcessing;
  ApiError error;
  error.status = 500;
  error.type = "server_error";
  error.code = "internal_error";
  error.message = "The server failed to handle this request; it was not run.";
  respond_error(error);
}

// Half-closes and reads until the client closes too (or a second passes), so that unread bytes
// (say, the body of a request refused with 413) do not make the kernel reset the connection
// before the client has read the answer.
void HttpConnection::graceful_close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosing;
  ConnectionSteps::close_after_peer(shared_from_this(), watching_);
}

void HttpConnection::close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  read_timer_.cancel();
  ConnectionSteps::close_socket(*this);
  registry_.erase(id_);
  abort_engine_stream();
  context_.counters->open_connections.fetch_sub(1, std::memory_order_relaxed);
  release_admission();
  sink_.reset();
  // Last: this may release the final reference (the caller's handler still holds one).
  keep_alive_while_answering_.reset();
}

}  // namespace gangway
