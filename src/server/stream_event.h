// What crosses between the network threads and the scheduler loop's thread for one request.
//
// A StreamSink stands for one request's answer: the network thread that owns the connection
// makes it and gives it to the loop with the request; the loop sends StreamEvents for it (a
// token was generated, the request ended, a query's answer is ready) back to that network
// thread, which hands them to the connection if it is still there. The sink's fields are split
// by thread: `connection` is read only on the network thread, `id` only on the loop's thread,
// so no field is shared and there is no lock; the shared_ptr only keeps the sink alive while
// either side still refers to it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/ids.h"
#include "core/outcome.h"

namespace gangway {

class HttpConnection;

struct StreamSink {
  StreamSink(size_t thread, std::weak_ptr<HttpConnection> owner)
      : network_thread(thread), connection(std::move(owner)) {}
  const size_t network_thread;
  std::weak_ptr<HttpConnection> connection;  // network thread only
  RequestId id;                              // loop thread only (set at submission)
};

// How a request ended, as its connection needs it to finish the answer.
struct FinishedRequest {
  Outcome outcome = Outcome::kCompleted;
  Reason reason = Reason::kNone;
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;
  int32_t cached_prompt_tokens = 0;
  bool hit_max_tokens = false;
  int retry_after_s = 1;
  // Milliseconds from the scheduler's receipt of the request to the planned end of the emulated
  // iteration that produced its first token: the engine's share of TTFT (queueing included).
  std::optional<double> engine_ttft_ms;
  std::optional<double> queue_ms;
};

struct StreamEvent {
  enum class Kind : uint8_t { kToken, kFinished, kReply };
  std::shared_ptr<StreamSink> sink;
  Kind kind = Kind::kToken;
  RequestId id;
  // kToken: the request's output length after this token (1 for the first token).
  int32_t tokens_after = 0;
  FinishedRequest finished;  // kFinished
  // kReply: the answer to a query (/health, /metrics, /load).
  int reply_status = 200;
  std::string reply_body;
};

}  // namespace gangway
