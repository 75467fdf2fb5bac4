// One HTTP/1.1 request from `gangway serve` to an engine process (a generation, or a pause,
// resume or health call), asynchronous on the executor (an io_context's) it is started on: connect,
// send, read the status and headers, then the body as it comes. A streamed body (text/event-stream)
// is split into SSE events and each event's data handed over as it arrives; any other body is
// handed over whole at the end (up to a limit).
//
// Every handler runs on that executor's thread. on_end runs exactly once, last, unless abort()
// was called first (the caller then already knows). Timeouts: connecting and every read must
// make progress within `idle_timeout` (a hung engine), and a whole non-streamed answer must
// arrive within it too. Nothing here throws into the io_context.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/time.h"

namespace gangway {

struct UpstreamRequest {
  std::string host;
  uint16_t port = 0;
  std::string method = "POST";
  std::string target;  // "/v1/completions"
  std::string body;    // JSON; empty: no body
  Duration idle_timeout = std::chrono::seconds(30);
};

// How a call ended.
enum class UpstreamEnd : uint8_t {
  kDone,           // the whole answer arrived
  kConnectFailed,  // refused, unreachable: the engine is not there
  kBroken,         // reset or closed before the answer was whole
  kTimedOut,       // no progress within idle_timeout
  kBadHttp,        // not HTTP, or an answer over its limits
};

const char* to_string(UpstreamEnd end);
// Whether the end says the engine process is gone or stuck (and not just this request).
bool engine_looks_down(UpstreamEnd end);

class UpstreamCall : public std::enable_shared_from_this<UpstreamCall> {
 public:
  struct Handlers {
    // The status line and headers arrived; `event_stream`: the body is SSE.
    std::function<void(int status, bool event_stream)> on_headers;
    // One SSE event's data (streamed bodies only).
    std::function<void(std::string_view data)> on_event;
    // The whole body (other bodies), before on_end.
    std::function<void(std::string_view body)> on_body;
    std::function<void(UpstreamEnd end, std::string_view detail)> on_end;
  };

  // Starts the call; the returned object may be dropped (the operations keep it alive) unless
  // the caller wants to abort it.
  static std::shared_ptr<UpstreamCall> start(boost::asio::any_io_executor io,
                                             UpstreamRequest request, Handlers handlers);
  // Closes the connection now (the engine sees the client go and aborts the request); no
  // handler runs after this. Call on the executor's thread.
  void abort();

  ~UpstreamCall();
  UpstreamCall(const UpstreamCall&) = delete;
  UpstreamCall& operator=(const UpstreamCall&) = delete;

  struct State;  // Beast's stream, parser and buffers (upstream_call.cc)

 private:
  UpstreamCall(boost::asio::any_io_executor io, UpstreamRequest request, Handlers handlers);
  void run();

  std::unique_ptr<State> state_;
};

}  // namespace gangway
