// `gangway serve`'s reading of a real engine's answer (request-level mode) on arbitrary bytes:
// the upstream call (Beast's response parser, chunked or sized bodies, the SSE splitter) and the
// engine stream over it (each event read as an OpenAI chunk, error bodies and error events, the
// end of the stream), through a loopback socket that delivers the bytes as the engine's answer.
// Whatever the engine sends, the request must end exactly once, with an outcome the scheduler
// core accepts: completed with a finish reason, or failed (engine_failed, or bad_request for a
// 400) with a message; never a negative token count, and every text and message must be valid
// UTF-8 (it goes into the client's JSON).
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "server/engine_stream.h"
#include "server/loopback_answer_server_for_tests.h"

namespace {

void check(bool holds) {
  if (!holds) std::abort();
}

bool valid_utf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();  // the strict writer throws on bytes that are not UTF-8
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static gangway::LoopbackAnswerServer engine;
  engine.serve(std::string_view(reinterpret_cast<const char*>(data), size));

  gangway::UpstreamRequest request;
  request.host = "127.0.0.1";
  request.port = engine.port();
  request.target = "/v1/completions";
  request.body = R"({"model":"m","prompt":"x","max_tokens":4,"stream":true})";
  request.idle_timeout = std::chrono::seconds(30);

  int ends = 0;
  gangway::EngineStreamEnd last;
  gangway::EngineStream::Handlers handlers;
  handlers.on_text = [&](std::string_view text, int32_t tokens) {
    check(ends == 0);
    check(!text.empty() && valid_utf8(std::string(text)));
    check(tokens >= 0);
  };
  handlers.on_end = [&](const gangway::EngineStreamEnd& end) {
    ++ends;
    last = end;
  };
  boost::asio::io_context io;
  {
    gangway::EngineStream stream(io.get_executor(), request, handlers);
    io.run();
  }
  engine.join();

  check(ends == 1);
  check(last.output_tokens >= 0);
  check(!last.prompt_tokens || *last.prompt_tokens >= 0);
  if (last.outcome == gangway::Outcome::kCompleted) {
    check(last.reason == gangway::Reason::kNone && !last.finish_reason.empty());
    check(valid_utf8(last.finish_reason));
  } else {
    check(last.outcome == gangway::Outcome::kFailed);
    check(last.reason == gangway::Reason::kEngineFailed ||
          last.reason == gangway::Reason::kBadRequest);
    check(!last.message.empty() && valid_utf8(last.message));
  }
  return 0;
}
