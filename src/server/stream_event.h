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
#include "core/time.h"

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

// Where a kDispatch event sends a request: one engine process (request-level mode,
// docs/engines.md).
struct UpstreamTarget {
  uint16_t engine = 0;  // the core's EngineIndex
  std::string host;
  uint16_t port = 0;
  Duration idle_timeout = std::chrono::seconds(30);
};

// What a kFinished, kReply or kDispatch event carries besides the sink (one per request, not per
// token).
struct StreamEventPayload {
  // Keeps the sink alive until the network thread has seen the request's last event.
  std::shared_ptr<StreamSink> keep;
  FinishedRequest finished;  // kFinished
  // kReply: the answer to a query (/health, /metrics, /load).
  int reply_status = 200;
  std::string reply_body;
  // kDispatch: the engine to send the request to.
  UpstreamTarget upstream;
};

// One event for a request's connection, 32 bytes: a token event (the common one, tens of
// thousands a second) is a plain struct with no reference count to touch and nothing to free.
struct StreamEvent {
  // kDispatch and kAbort exist only in request-level mode: send the request to its engine now;
  // close its upstream call (the core ended it while its engine ran it).
  enum class Kind : uint8_t { kToken, kFinished, kReply, kDispatch, kAbort };
  // Not owning. The loop's record of a live request holds the sink until the request ends; it
  // then hands it over to the request's kFinished event (payload->keep), which reaches the same
  // network thread after every token event of that request (one mailbox, in order). A token
  // event is therefore never delivered after its sink is gone; one that is never delivered
  // (shutdown) is only destroyed, which does not touch the sink.
  StreamSink* sink = nullptr;
  RequestId id;
  // kToken: the request's output length after this token (1 for the first token).
  int32_t tokens_after = 0;
  Kind kind = Kind::kToken;
  std::unique_ptr<StreamEventPayload> payload;  // kFinished, kReply, kDispatch
};

}  // namespace gangway
