// One client request's call to its engine (request-level mode), on the network thread of the
// client's connection: sends the upstream body, reads the engine's SSE answer chunk by chunk,
// hands each chunk's text to the connection at once, counts tokens, and ends exactly once with
// an outcome the scheduler core understands:
//  - completed: the stream ended with a finish_reason or [DONE];
//  - failed, kBadRequest: the engine answered 400 (the request can never run there), with the
//    engine's message;
//  - failed, kEngineFailed: any other error status, an error event, a chunk that is not an
//    OpenAI chunk, a body that is not SSE, a connection refused, reset or closed before the
//    end, or no byte within the idle timeout. `engine_down` is set when the failure says the
//    engine process itself is gone or stuck (connection refused, reset, timed out).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/outcome.h"
#include "engine/upstream_call.h"

namespace gangway {

struct EngineStreamEnd {
  Outcome outcome = Outcome::kCompleted;
  Reason reason = Reason::kNone;
  // Tokens generated: the engine's usage.completion_tokens when it sent one, else the chunks
  // with text.
  int32_t output_tokens = 0;
  std::optional<int32_t> prompt_tokens;  // the engine's usage.prompt_tokens
  std::string finish_reason;             // "stop", "length", ... when completed
  std::string message;                   // what went wrong, for the client and the log
  bool engine_down = false;
};

class EngineStream {
 public:
  struct Handlers {
    // Text of one chunk (possibly several tokens); `tokens` the output length so far.
    std::function<void(std::string_view text, int32_t tokens)> on_text;
    std::function<void(const EngineStreamEnd&)> on_end;
  };

  EngineStream(boost::asio::any_io_executor io, UpstreamRequest request, Handlers handlers);
  ~EngineStream();
  EngineStream(const EngineStream&) = delete;
  EngineStream& operator=(const EngineStream&) = delete;

  // Closes the call now (the engine aborts the request); on_end does not run.
  void abort();
  bool ended() const { return *ended_; }

 private:
  std::shared_ptr<bool> ended_;
  std::shared_ptr<UpstreamCall> call_;
};

}  // namespace gangway
