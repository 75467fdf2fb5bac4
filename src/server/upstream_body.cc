#include "server/upstream_body.h"

#include <nlohmann/json.hpp>

namespace gangway {

std::string make_upstream_body(std::string_view client_body, const std::string& served_model_name) {
  nlohmann::json body = nlohmann::json::parse(client_body);
  body["model"] = served_model_name;
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  for (const char* field : {"slo_class", "tenant", "ttft_deadline_ms"}) body.erase(field);
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gangway
