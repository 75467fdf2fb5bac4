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

}  // namespace gangway
