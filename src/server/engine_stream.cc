#include "server/engine_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "engine/sse_stream.h"

namespace gangway {
namespace {

// What the handlers of one call share (they outlive the EngineStream when it is aborted; then
// `ended` stops them).
struct StreamProgress {
  EngineStream::Handlers handlers;
  std::shared_ptr<bool> ended;
  // Weak: the call owns its handlers, and they own this.
  std::weak_ptr<UpstreamCall> call;
  int status = 0;
  bool event_stream = false;
  int32_t text_chunks = 0;
  std::optional<int64_t> completion_tokens;
  std::optional<int64_t> prompt_tokens;
  std::string finish_reason;
  bool done_marker = false;
  std::optional<EngineStreamEnd> failure;

  void end(EngineStreamEnd result) {
    if (*ended) return;
    *ended = true;
    if (const auto open = call.lock()) open->abort();
    if (handlers.on_end) handlers.on_end(result);
  }

  EngineStreamEnd failed(Reason reason, std::string message, bool engine_down = false) const {
    EngineStreamEnd result;
    result.outcome = Outcome::kFailed;
    result.reason = reason;
    result.output_tokens = output_tokens();
    result.message = std::move(message);
    result.engine_down = engine_down;
    return result;
  }

  // The engine's counts are read as int64 (JSON allows any size): anything outside int32 is
  // clamped, never wrapped into a negative count for the scheduler.
  static int32_t token_count(int64_t reported) {
    return static_cast<int32_t>(std::clamp<int64_t>(reported, 0, INT32_MAX));
  }

  int32_t output_tokens() const {
    if (completion_tokens) return token_count(*completion_tokens);
    return text_chunks;
  }

  void on_event(std::string_view data) {
    if (*ended) return;
    const StreamChunk chunk = parse_stream_chunk(data, /*keep_text=*/true);
    switch (chunk.kind) {
      case StreamChunk::Kind::kDone:
        done_marker = true;
        return;
      case StreamChunk::Kind::kInvalid:
        end(failed(Reason::kEngineFailed, "the engine sent an event that is not an OpenAI chunk"));
        return;
      case StreamChunk::Kind::kError:
        end(failed(Reason::kEngineFailed,
                   "the engine reported an error in its stream: " +
                       (chunk.error_message.empty() ? chunk.error_code : chunk.error_message)));
        return;
      case StreamChunk::Kind::kChunk:
        break;
    }
    if (chunk.completion_tokens) completion_tokens = chunk.completion_tokens;
    if (chunk.prompt_tokens) prompt_tokens = chunk.prompt_tokens;
    if (chunk.finish_reason) finish_reason = *chunk.finish_reason;
    if (!chunk.text.empty()) {
      ++text_chunks;
      if (handlers.on_text) handlers.on_text(chunk.text, output_tokens());
    }
  }

  void on_body(std::string_view body) {
    if (*ended) return;
    // Not a stream: an error answer (or garbage where a stream was due).
    std::string message;
    const StreamChunk chunk = parse_stream_chunk(body);
    if (chunk.kind == StreamChunk::Kind::kError) {
      message = chunk.error_message.empty() ? chunk.error_code : chunk.error_message;
    }
    if (status == 400) {
      end(failed(Reason::kBadRequest,
                 message.empty() ? "the engine refused the request (400)" : message));
      return;
    }
    end(failed(Reason::kEngineFailed, fmt::format("the engine answered {}{}{}", status,
                                                  message.empty() ? "" : ": ", message)));
  }

  void on_end(UpstreamEnd how, std::string_view detail) {
    if (*ended) return;
    if (how != UpstreamEnd::kDone) {
      end(failed(Reason::kEngineFailed,
                 fmt::format("the engine's connection {} ({})",
                             how == UpstreamEnd::kTimedOut        ? "went silent"
                             : how == UpstreamEnd::kConnectFailed ? "could not be opened"
                             : how == UpstreamEnd::kBadHttp       ? "carried bad HTTP"
                                                                  : "broke off",
                             detail),
                 engine_looks_down(how)));
      return;
    }
    if (!event_stream || status != 200) {
      on_body("");
      return;
    }
    if (finish_reason.empty() && !done_marker) {
      end(failed(Reason::kEngineFailed, "the engine's stream ended without a finish_reason"));
      return;
    }
    EngineStreamEnd result;
    result.outcome = Outcome::kCompleted;
    result.output_tokens = output_tokens();
    if (prompt_tokens) result.prompt_tokens = token_count(*prompt_tokens);
    result.finish_reason = finish_reason.empty() ? "stop" : finish_reason;
    end(result);
  }
};

}  // namespace

EngineStream::EngineStream(boost::asio::any_io_executor io, UpstreamRequest request,
                           Handlers handlers)
    : ended_(std::make_shared<bool>(false)) {
  auto progress = std::make_shared<StreamProgress>();
  progress->handlers = std::move(handlers);
  progress->ended = ended_;
  UpstreamCall::Handlers call;
  call.on_headers = [progress](int status, bool event_stream) {
    progress->status = status;
    progress->event_stream = event_stream;
  };
  call.on_event = [progress](std::string_view data) { progress->on_event(data); };
  call.on_body = [progress](std::string_view body) { progress->on_body(body); };
  call.on_end = [progress](UpstreamEnd how, std::string_view detail) {
    progress->on_end(how, detail);
  };
  call_ = UpstreamCall::start(io, std::move(request), std::move(call));
  progress->call = call_;
}

EngineStream::~EngineStream() {
  abort();
}

void EngineStream::abort() {
  if (!*ended_) *ended_ = true;
  if (call_) call_->abort();
  call_.reset();
}

}  // namespace gangway
