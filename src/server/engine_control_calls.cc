#include "server/engine_control_calls.h"

namespace gangway {

const char* to_string(EngineCall call) {
  switch (call) {
    case EngineCall::kPause:
      return "pause";
    case EngineCall::kResume:
      return "resume";
    case EngineCall::kHealth:
      return "health";
  }
  return "health";
}

UpstreamRequest engine_control_request(EngineKind kind, EngineCall call,
                                       const EngineEndpoint& endpoint, Duration timeout) {
  UpstreamRequest request;
  request.host = endpoint.host;
  request.port = endpoint.port;
  request.idle_timeout = timeout;
  request.method = "POST";
  switch (call) {
    case EngineCall::kPause:
      if (kind == EngineKind::kSglang) {
        request.target = "/pause_generation";
        request.body = R"({"mode":"in_place"})";
      } else {
        request.target = "/pause?mode=keep&clear_cache=false";
      }
      break;
    case EngineCall::kResume:
      request.target = kind == EngineKind::kSglang ? "/continue_generation" : "/resume";
      if (kind == EngineKind::kSglang) request.body = "{}";
      break;
    case EngineCall::kHealth:
      request.method = "GET";
      request.target = kind == EngineKind::kOpenai ? "/v1/models" : "/health";
      break;
  }
  return request;
}

}  // namespace gangway
