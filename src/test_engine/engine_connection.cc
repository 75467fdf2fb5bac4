#include "test_engine/engine_connection.h"

#include <fmt/format.h>

#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>

#include "batching/pause_mode.h"
#include "http/beast_text.h"
#include "http/connection_steps.h"
#include "http/http_status.h"
#include "http/response_text.h"
#include "test_engine/test_engine_server.h"

namespace gangway {
namespace {

namespace http = boost::beast::http;
namespace asio = boost::asio;
using boost::system::error_code;

// The value of `key` in a query string ("a=1&mode=keep"), if present. No percent-decoding: the
// values the engine reads are plain words.
std::optional<std::string_view> query_value(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const size_t end = query.find('&');
    const std::string_view pair = query.substr(0, end);
    const size_t equals = pair.find('=');
    if (pair.substr(0, equals) == key) {
      return equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1);
    }
    if (end == std::string_view::npos) break;
    query.remove_prefix(end + 1);
  }
  return std::nullopt;
}

}  // namespace

EngineConnection::EngineConnection(asio::ip::tcp::socket socket, TestEngineServer& server)
    : socket_(std::move(socket)), server_(server), read_timer_(socket_.get_executor()) {}

EngineConnection::~EngineConnection() = default;

void EngineConnection::start() {
  guarded([&] {
    error_code ignored;
    socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
    read_request();
  });
}

void EngineConnection::read_request() {
  state_ = State::kReading;
  read_timer_.expires_after(kReadTimeout);
  read_timer_.async_wait([self = shared_from_this()](const error_code& error) {
    if (!error && self->state_ == State::kReading) self->guarded([&] { self->close(); });
  });
  if (watching_) return;  // the posted read's completion starts the parse
  if (buffer_.size() == 0) {
    if (!keep_alive_) {
      graceful_close();
      return;
    }
    watch();
    return;
  }
  start_parse();
}

void EngineConnection::start_parse() {
  parser_.emplace();
  parser_->header_limit(kMaxHeaderBytes);
  parser_->body_limit(kMaxBodyBytes);
  http::async_read(socket_, buffer_, *parser_,
                   [self = shared_from_this()](const error_code& error, size_t) {
                     self->guarded([&] { self->on_read(error); });
                   });
}

void EngineConnection::on_read(const error_code& error) {
  if (state_ != State::kReading) return;
  if (error) {
    if (error == asio::error::operation_aborted || error == http::error::end_of_stream ||
        error == asio::error::eof || error == asio::error::connection_reset) {
      close();
      return;
    }
    keep_alive_ = false;
    state_ = State::kClosing;
    if (error == http::error::header_limit) {
      respond_error(EngineApiError{431, "BadRequestError", "request headers too large", ""});
    } else if (error == http::error::body_limit) {
      respond_error(EngineApiError{413, "BadRequestError", "request body too large", ""});
    } else {
      respond_error(EngineApiError::bad_request("malformed HTTP request: " + error.message()));
    }
    return;
  }
  read_timer_.cancel();
  keep_alive_ = parser_->get().keep_alive();
  route();
}

void EngineConnection::watch() {
  ConnectionSteps::watch_for_bytes(shared_from_this());
}

void EngineConnection::on_watch(const error_code& error, size_t bytes) {
  watching_ = false;
  if (state_ == State::kClosed) return;
  if (error) {
    end_on_socket_error();
    return;
  }
  buffer_.commit(bytes);
  if (state_ == State::kReading) start_parse();
  // Otherwise the bytes of a next request wait in the buffer until this answer is out; a client
  // that goes away meanwhile shows up as a failed write.
}

void EngineConnection::route() {
  const auto& request = parser_->get();
  const std::string_view target = as_view(request.target());
  const size_t question = target.find('?');
  const std::string_view path = target.substr(0, question);
  const std::string_view query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  const http::verb method = request.method();
  const bool get = method == http::verb::get;
  const bool post = method == http::verb::post;

  if (path == "/health") {
    if (!get) return respond_detail(405, "Method Not Allowed");
    return respond(200, "", "");
  }
  if (path == "/v1/models") {
    if (!get) return respond_detail(405, "Method Not Allowed");
    return respond(200, "application/json", server_.models_body());
  }
  if (path == "/metrics") {
    if (!get) return respond_detail(405, "Method Not Allowed");
    return respond(200, "text/plain; version=0.0.4; charset=utf-8", server_.metrics());
  }
  if (path == "/is_paused") {
    if (!get) return respond_detail(405, "Method Not Allowed");
    return respond(200, "application/json",
                   server_.is_paused() ? R"({"is_paused":true})" : R"({"is_paused":false})");
  }
  if (path == "/pause") {
    if (!post) return respond_detail(405, "Method Not Allowed");
    // vLLM's older spelling of mode=wait: wait_for_inflight_requests=true (when no mode given).
    const auto mode_text = query_value(query, "mode");
    const auto wait_flag = query_value(query, "wait_for_inflight_requests");
    const bool legacy_wait =
        wait_flag && (*wait_flag == "true" || *wait_flag == "True" || *wait_flag == "1");
    const auto mode = mode_text     ? parse_pause_mode(*mode_text)
                      : legacy_wait ? PauseMode::kWait
                                    : PauseMode::kAbort;
    if (!mode) {
      return respond_error(
          EngineApiError::bad_request("mode must be one of keep, wait, abort", "mode"));
    }
    state_ = State::kPausing;
    self_while_busy_ = shared_from_this();
    parser_.reset();
    if (!watching_ && buffer_.size() == 0) watch();
    server_.pause(*mode, weak_from_this());
    return;
  }
  if (path == "/resume") {
    if (!post) return respond_detail(405, "Method Not Allowed");
    server_.resume();
    return respond(200, "application/json", R"({"status":"resumed"})");
  }
  if (path == "/v1/completions" || path == "/v1/chat/completions") {
    if (!post) return respond_detail(405, "Method Not Allowed");
    return start_generation(path == "/v1/completions" ? ApiEndpoint::kCompletions
                                                      : ApiEndpoint::kChatCompletions);
  }
  respond_detail(404, "Not Found");
}

void EngineConnection::start_generation(ApiEndpoint endpoint) {
  auto parsed = parse_generation_parameters(endpoint, parser_->get().body(), server_.model_name());
  parser_.reset();  // the body is no longer needed
  if (const auto* error = std::get_if<EngineApiError>(&parsed)) return respond_error(*error);
  generation_ = std::get<GenerationParameters>(parsed);
  auto submitted = server_.submit(generation_, weak_from_this());
  if (const auto* error = std::get_if<EngineApiError>(&submitted)) return respond_error(*error);
  request_id_ = std::get<uint64_t>(submitted);
  renderer_.emplace(endpoint, server_.next_response_id(endpoint), server_.created_unix_s(),
                    server_.model_name());
  headers_sent_ = false;
  state_ = State::kGenerating;
  self_while_busy_ = shared_from_this();
  if (!watching_ && buffer_.size() == 0) watch();
}

void EngineConnection::on_update(const RequestUpdate& update) {
  guarded([&] { handle_update(update); });
}

void EngineConnection::handle_update(const RequestUpdate& update) {
  if (state_ != State::kGenerating || update.id != request_id_) return;
  const char* finish = update.finished ? to_string(update.reason) : nullptr;
  if (!generation_.stream) {
    if (update.finished) {
      respond(200, "application/json",
              renderer_->full_answer(update.output_tokens, finish, update.prompt_tokens));
    }
    return;
  }
  if (!headers_sent_) send_stream_headers();
  std::string events;
  if (update.new_tokens > 0) {
    renderer_->append_token_events(events, update.output_tokens - 1, finish);
  } else if (update.finished) {
    renderer_->append_finish_event(events, finish);
  }
  if (update.finished) {
    if (generation_.include_usage) {
      renderer_->append_usage_event(events, update.prompt_tokens, update.output_tokens);
    }
    AnswerRenderer::append_done(events);
  }
  send_chunk(events);
  if (update.finished) {
    out_pending_.append(kLastChunk);
    write_now();
    end_response();
  }
}

void EngineConnection::on_pause_complete() {
  guarded([&] {
    if (state_ != State::kPausing) return;
    respond(200, "application/json", R"({"status":"paused"})");
  });
}

void EngineConnection::shut_down() {
  guarded([&] { close(); });
}

void EngineConnection::respond(int status, std::string_view content_type, std::string_view body) {
  if (state_ == State::kClosed) return;
  append_response_head(out_pending_, status, "gangway-engine", content_type, body.size(), "",
                       keep_alive_);
  out_pending_.append(body);
  write_now();
  end_response();
}

void EngineConnection::respond_error(const EngineApiError& error) {
  respond(error.status, "application/json", engine_error_body(error));
}

void EngineConnection::respond_detail(int status, std::string_view detail) {
  respond(status, "application/json", fmt::format(R"({{"detail":"{}"}})", detail));
}

void EngineConnection::send_stream_headers() {
  headers_sent_ = true;
  append_event_stream_head(out_pending_, "gangway-engine", "", keep_alive_);
}

void EngineConnection::send_chunk(std::string_view data) {
  append_chunk(out_pending_, data);
  write_now();
}

void EngineConnection::end_response() {
  const auto self = std::move(self_while_busy_);
  renderer_.reset();
  parser_.reset();
  request_id_ = 0;
  if (state_ == State::kClosed) return;
  if (!keep_alive_ || state_ == State::kClosing) {
    state_ = State::kClosing;
    close_after_write_ = true;
    if (!writing_) graceful_close();
    return;
  }
  read_request();
}

void EngineConnection::write_now() {
  if (writing_ || out_pending_.empty() || state_ == State::kClosed) return;
  ConnectionSteps::start_async_write(shared_from_this());
}

void EngineConnection::on_write_failed(const error_code&) {
  end_on_socket_error();
}

void EngineConnection::end_on_socket_error() {
  if (state_ == State::kGenerating || state_ == State::kPausing) {
    client_gone();
  } else {
    close();
  }
}

void EngineConnection::client_gone() {
  if (state_ == State::kGenerating && request_id_ != 0) server_.abort(request_id_);
  request_id_ = 0;
  close();
}

void EngineConnection::graceful_close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosing;
  ConnectionSteps::close_after_peer(shared_from_this(), watching_);
}

void EngineConnection::close() {
  if (state_ == State::kClosed) return;
  if (state_ == State::kGenerating && request_id_ != 0) server_.abort(request_id_);
  state_ = State::kClosed;
  read_timer_.cancel();
  ConnectionSteps::close_socket(*this);
  renderer_.reset();
  // Last: this may release the final reference (the caller's handler still holds one).
  self_while_busy_.reset();
}

void EngineConnection::on_failure(std::string_view /*what*/) {
  const bool answer_started = headers_sent_ || writing_ || !out_pending_.empty();
  if (state_ == State::kClosed) return;
  if (state_ == State::kGenerating && request_id_ != 0) server_.abort(request_id_);
  request_id_ = 0;
  if (answer_started || state_ == State::kClosing) {
    close();
    return;
  }
  keep_alive_ = false;
  state_ = State::kClosing;
  respond_error(
      EngineApiError{500, "InternalServerError", "the engine failed to handle this request", ""});
}

}  // namespace gangway
