#include "engine/upstream_call.h"

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <limits>

#include "engine/sse_stream.h"

namespace gangway {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using boost::system::error_code;

// A non-streamed answer (an error body, a control call's reply) larger than this is not one an
// engine sends.
constexpr size_t kMaxPlainBody = 4 * 1024 * 1024;

}  // namespace

const char* to_string(UpstreamEnd end) {
  switch (end) {
    case UpstreamEnd::kDone:
      return "done";
    case UpstreamEnd::kConnectFailed:
      return "connect_failed";
    case UpstreamEnd::kBroken:
      return "broken";
    case UpstreamEnd::kTimedOut:
      return "timed_out";
    case UpstreamEnd::kBadHttp:
      return "bad_http";
  }
  return "done";
}

bool engine_looks_down(UpstreamEnd end) {
  return end == UpstreamEnd::kConnectFailed || end == UpstreamEnd::kBroken ||
         end == UpstreamEnd::kTimedOut;
}

struct UpstreamCall::State {
  State(asio::any_io_executor io, UpstreamRequest call_request, Handlers call_handlers)
      : resolver(io),
        stream(io),
        spec(std::move(call_request)),
        handlers(std::move(call_handlers)) {}

  asio::ip::tcp::resolver resolver;
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  http::request<http::string_body> request;
  std::optional<http::response_parser<http::buffer_body>> parser;
  std::array<char, 16 * 1024> chunk{};
  UpstreamRequest spec;
  Handlers handlers;
  SseSplitter splitter;
  bool event_stream = false;
  std::string body;
  bool finished = false;
};

UpstreamCall::UpstreamCall(asio::any_io_executor io, UpstreamRequest request, Handlers handlers)
    : state_(std::make_unique<State>(io, std::move(request), std::move(handlers))) {}

UpstreamCall::~UpstreamCall() = default;

std::shared_ptr<UpstreamCall> UpstreamCall::start(asio::any_io_executor io, UpstreamRequest request,
                                                  Handlers handlers) {
  std::shared_ptr<UpstreamCall> call(new UpstreamCall(io, std::move(request), std::move(handlers)));
  asio::post(io, [call] { call->run(); });
  return call;
}

void UpstreamCall::abort() {
  State& s = *state_;
  if (s.finished) return;
  s.finished = true;
  error_code ignored;
  s.resolver.cancel();
  s.stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  s.stream.socket().close(ignored);
}

namespace {

// The steps of one call, as free functions over the call's state so that each completion
// handler holds the call alive (`self`).
struct CallSteps {
  std::shared_ptr<UpstreamCall> self;
  UpstreamCall::State& s;

  void finish(UpstreamEnd end, std::string_view detail) const {
    if (s.finished) return;
    s.finished = true;
    error_code ignored;
    s.stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    s.stream.socket().close(ignored);
    if (s.handlers.on_end) s.handlers.on_end(end, detail);
  }

  static UpstreamEnd end_for(const error_code& error) {
    if (error == beast::error::timeout) return UpstreamEnd::kTimedOut;
    if (error.category() == http::make_error_code(http::error::end_of_stream).category() &&
        error != http::error::end_of_stream && error != http::error::partial_message) {
      return UpstreamEnd::kBadHttp;
    }
    return UpstreamEnd::kBroken;
  }

  void connect(const asio::ip::tcp::endpoint& endpoint) const {
    s.stream.expires_after(s.spec.idle_timeout);
    s.stream.async_connect(endpoint, [steps = *this](const error_code& error) {
      if (steps.s.finished) return;
      if (error) {
        steps.finish(
            error == beast::error::timeout ? UpstreamEnd::kTimedOut : UpstreamEnd::kConnectFailed,
            error.message());
        return;
      }
      steps.write();
    });
  }

  void write() const {
    http::request<http::string_body>& request = s.request;
    request.method_string(s.spec.method);
    request.target(s.spec.target);
    request.version(11);
    request.set(http::field::host, s.spec.host + ":" + std::to_string(s.spec.port));
    request.set(http::field::user_agent, "gangway");
    request.set(http::field::accept, "application/json, text/event-stream");
    if (!s.spec.body.empty()) request.set(http::field::content_type, "application/json");
    request.keep_alive(false);
    request.body() = s.spec.body;
    request.prepare_payload();
    s.stream.expires_after(s.spec.idle_timeout);
    http::async_write(s.stream, request, [steps = *this](const error_code& error, size_t) {
      if (steps.s.finished) return;
      if (error) {
        steps.finish(end_for(error), error.message());
        return;
      }
      steps.read_header();
    });
  }

  void read_header() const {
    s.parser.emplace();
    // Streams have no length limit (Boost 1.74's parser compares a content length against an
    // empty limit as "over it", so the limit is the largest number instead of none).
    s.parser->body_limit(std::numeric_limits<std::uint64_t>::max());
    s.stream.expires_after(s.spec.idle_timeout);
    http::async_read_header(s.stream, s.buffer, *s.parser,
                            [steps = *this](const error_code& error, size_t) {
                              if (steps.s.finished) return;
                              if (error) {
                                steps.finish(end_for(error), error.message());
                                return;
                              }
                              steps.on_header();
                            });
  }

  void on_header() const {
    const auto& response = s.parser->get();
    const auto type = response[http::field::content_type];
    s.event_stream = std::string_view(type.data(), type.size()).find("text/event-stream") !=
                     std::string_view::npos;
    if (s.handlers.on_headers) s.handlers.on_headers(response.result_int(), s.event_stream);
    if (s.finished) return;  // aborted by the handler
    if (s.parser->is_done()) {
      if (s.handlers.on_body && !s.event_stream) s.handlers.on_body(s.body);
      finish(UpstreamEnd::kDone, "");
      return;
    }
    read_body();
  }

  void read_body() const {
    s.parser->get().body().data = s.chunk.data();
    s.parser->get().body().size = s.chunk.size();
    s.stream.expires_after(s.spec.idle_timeout);
    http::async_read_some(s.stream, s.buffer, *s.parser, [steps = *this](error_code error, size_t) {
      if (steps.s.finished) return;
      if (error == http::error::need_buffer) error = {};
      if (error) {
        steps.finish(end_for(error), error.message());
        return;
      }
      steps.on_body_bytes();
    });
  }

  void on_body_bytes() const {
    const size_t got = s.chunk.size() - s.parser->get().body().size;
    const std::string_view bytes(s.chunk.data(), got);
    if (s.event_stream) {
      s.splitter.feed(bytes, [this](std::string_view data) {
        if (!s.finished && s.handlers.on_event) s.handlers.on_event(data);
      });
      if (s.finished) return;
      if (s.splitter.overflowed()) {
        finish(UpstreamEnd::kBadHttp, "an SSE event over its size limit");
        return;
      }
    } else {
      s.body.append(bytes);
      if (s.body.size() > kMaxPlainBody) {
        finish(UpstreamEnd::kBadHttp, "an answer body over its size limit");
        return;
      }
    }
    if (s.parser->is_done()) {
      if (s.handlers.on_body && !s.event_stream) s.handlers.on_body(s.body);
      finish(UpstreamEnd::kDone, "");
      return;
    }
    read_body();
  }
};

}  // namespace

void UpstreamCall::run() {
  State& s = *state_;
  if (s.finished) return;
  const CallSteps steps{shared_from_this(), s};
  error_code error;
  const asio::ip::address address = asio::ip::make_address(s.spec.host, error);
  if (!error) {
    steps.connect(asio::ip::tcp::endpoint(address, s.spec.port));
    return;
  }
  s.resolver.async_resolve(
      s.spec.host, std::to_string(s.spec.port),
      [steps](const error_code& resolve_error, const asio::ip::tcp::resolver::results_type& found) {
        if (steps.s.finished) return;
        if (resolve_error || found.empty()) {
          steps.finish(UpstreamEnd::kConnectFailed,
                       resolve_error ? resolve_error.message() : "no address");
          return;
        }
        steps.connect(*found.begin());
      });
}

}  // namespace gangway
