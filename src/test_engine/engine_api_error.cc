#include "test_engine/engine_api_error.h"

#include <nlohmann/json.hpp>

namespace gangway {

std::string engine_error_body(const EngineApiError& error) {
  nlohmann::json info = {
      {"message", error.message}, {"type", error.type}, {"param", nullptr}, {"code", error.status}};
  if (!error.param.empty()) info["param"] = error.param;
  // Messages may repeat client text: invalid UTF-8 is replaced rather than thrown on.
  return nlohmann::json{{"error", info}}.dump(-1, ' ', false,
                                              nlohmann::json::error_handler_t::replace);
}

const char* http_status_text(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}

}  // namespace gangway
