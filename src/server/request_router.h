// What `gangway serve` does with a request that has arrived whole, decided without a socket:
// what HTTP/1.1 requires of every request (one Host, no coding the server does not decode),
// routing by method and path, the probe reserve's rule, the OpenAI request's validation and
// the draining rule. The connection (http_connection.h) does the I/O with the result; the HTTP
// fuzz target (fuzz/) runs it on arbitrary bytes. Pure; thread-safe.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string>

#include "config/server_config.h"
#include "core/node_spec.h"
#include "server/connection_admission.h"
#include "server/openai_request.h"
#include "server/scheduler_loop.h"

namespace gangway {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;

struct RouterContext {
  const NodeSpec* node = nullptr;
  const ApiContext* api = nullptr;
  const ServerConfig* config = nullptr;
  const std::string* models_body = nullptr;  // GET /v1/models, rendered once
  bool draining = false;
  ConnectionClass connection_class = ConnectionClass::kServed;
};

struct RoutedRequest {
  enum class Kind : uint8_t {
    kAnswer,    // answered here: status, content type, body
    kQuery,     // answered by the scheduler loop (/health, /metrics, /load)
    kGenerate,  // a generation request for the scheduler
  };
  Kind kind = Kind::kAnswer;
  int status = 200;
  std::string content_type;
  std::string body;
  std::string extra_headers;  // whole lines, "Name: value\r\n"
  // The request broke HTTP's framing rules: nothing after it on the connection can be trusted.
  bool close_connection = false;
  LoopQuery query = LoopQuery::kHealth;
  Endpoint endpoint = Endpoint::kCompletions;
  GenerationRequest generation;
};

RoutedRequest route_request(const HttpRequest& request, const RouterContext& context);

// An error as a whole answer: its JSON body, and Retry-After when it has one.
RoutedRequest error_answer(const ApiError& error, std::string extra_headers = {});

}  // namespace gangway
