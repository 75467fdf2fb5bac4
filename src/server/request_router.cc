#include "server/request_router.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "http/beast_text.h"
#include "server/client_text.h"

namespace gangway {
namespace {

namespace http = boost::beast::http;

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool equals_ignoring_case(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (size_t i = 0; i < lower.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != lower[i]) return false;
  }
  return true;
}

// "application/json", in any case, with or without parameters ("; charset=utf-8"); not
// "application/jsonx" or "application/json-seq".
bool is_json_media_type(std::string_view content_type) {
  const size_t parameters = content_type.find(';');
  return equals_ignoring_case(trimmed(content_type.substr(0, parameters)), "application/json");
}

std::optional<std::string> header_value(const HttpRequest& request, std::string_view name) {
  const auto it = request.find(boost::beast::string_view(name.data(), name.size()));
  if (it == request.end()) return std::nullopt;
  return std::string(it->value());
}

struct Route {
  std::string_view path;
  http::verb method;
};

constexpr Route kRoutes[] = {
    {"/v1/completions", http::verb::post},
    {"/v1/chat/completions", http::verb::post},
    {"/v1/models", http::verb::get},
    {"/health", http::verb::get},
    {"/ready", http::verb::get},
    {"/metrics", http::verb::get},
    {"/load", http::verb::get},
};

// What HTTP/1.1 requires of every request before it is routed (RFC 9112 section 3.2, RFC 9110
// section 8.4): exactly one Host header, and no content or transfer coding the server does not
// decode (Beast decodes only chunked; anything else would reach the JSON parser still encoded).
std::optional<ApiError> framing_error(const HttpRequest& request) {
  const auto hosts = request.count(http::field::host);
  if (hosts > 1 || (hosts == 0 && request.version() >= 11)) {
    return ApiError::request_error(400, "bad_http_request",
                                   hosts > 1 ? "The request has more than one Host header."
                                             : "An HTTP/1.1 request needs a Host header.");
  }
  const auto encodings = request.equal_range(http::field::content_encoding);
  for (auto field = encodings.first; field != encodings.second; ++field) {
    const std::string_view value = as_view(field->value());
    if (!value.empty() && !equals_ignoring_case(trimmed(value), "identity")) {
      return ApiError::request_error(415, "unsupported_content_encoding",
                                     "Content-Encoding '" + shown_client_text(value) +
                                         "' is not supported; send the body uncompressed.");
    }
  }
  const auto transfer_codings = request.equal_range(http::field::transfer_encoding);
  for (auto field = transfer_codings.first; field != transfer_codings.second; ++field) {
    const std::string_view value = as_view(field->value());
    if (!equals_ignoring_case(trimmed(value), "chunked")) {
      return ApiError::request_error(501, "unsupported_transfer_encoding",
                                     "Transfer-Encoding '" + shown_client_text(value) +
                                         "' is not supported; only chunked is.");
    }
  }
  return std::nullopt;
}

ApiError reserve_error(const RouterContext& context) {
  const bool node_full = context.connection_class == ConnectionClass::kReserveNodeFull;
  ApiError error;
  error.status = node_full ? 503 : 429;
  error.type = node_full ? "overloaded_error" : "rate_limit_error";
  error.code = node_full ? "too_many_connections" : "too_many_client_connections";
  error.message = node_full ? fmt::format(
                                  "This node holds its maximum of {} connections; send the request "
                                  "to another node or retry after the given delay.",
                                  context.config->max_connections)
                            : fmt::format(
                                  "Your address holds its maximum of {} connections to this node; "
                                  "reuse them (keep-alive) or retry after the given delay.",
                                  context.config->max_connections_per_client);
  error.retry_after_s = 1;
  return error;
}

RoutedRequest answer(int status, std::string body) {
  RoutedRequest routed;
  routed.status = status;
  routed.content_type = "application/json";
  routed.body = std::move(body);
  return routed;
}

RoutedRequest route_generation(const HttpRequest& request, Endpoint endpoint,
                               const RouterContext& context) {
  const auto content_type = request[http::field::content_type];
  if (!content_type.empty() && !is_json_media_type(as_view(content_type))) {
    return error_answer(ApiError::request_error(415, "unsupported_media_type",
                                                "Content-Type must be application/json, got '" +
                                                    shown_client_text(as_view(content_type)) +
                                                    "'."));
  }
  SchedulingHeaders headers;
  headers.slo_class = header_value(request, "X-Gangway-Slo-Class");
  headers.tenant = header_value(request, "X-Gangway-Tenant");
  headers.ttft_deadline = header_value(request, "X-Gangway-Ttft-Deadline-Ms");
  auto parsed = parse_generation_request(endpoint, request.body(), headers, *context.api);
  if (auto* error = std::get_if<ApiError>(&parsed)) return error_answer(*error);
  if (context.draining) {
    return error_answer(error_for_reason(
        Reason::kDraining,
        static_cast<int>(
            std::chrono::ceil<std::chrono::seconds>(context.config->drain_grace).count()) +
            1));
  }
  RoutedRequest routed;
  routed.kind = RoutedRequest::Kind::kGenerate;
  routed.endpoint = endpoint;
  routed.generation = std::move(std::get<GenerationRequest>(parsed));
  return routed;
}

}  // namespace

RoutedRequest error_answer(const ApiError& error, std::string extra_headers) {
  RoutedRequest routed = answer(error.status, error_body(error));
  routed.extra_headers = std::move(extra_headers);
  if (error.retry_after_s) {
    routed.extra_headers += fmt::format("Retry-After: {}\r\n", *error.retry_after_s);
  }
  return routed;
}

RoutedRequest route_request(const HttpRequest& request, const RouterContext& context) {
  if (const auto error = framing_error(request)) {
    RoutedRequest routed = error_answer(*error);
    routed.close_connection = true;
    return routed;
  }
  std::string_view target = as_view(request.target());
  if (const size_t query = target.find('?'); query != std::string_view::npos) {
    target = target.substr(0, query);
  }
  const http::verb method = request.method();
  const Route* found = nullptr;
  for (const Route& route : kRoutes) {
    if (route.path == target) found = &route;
  }
  const bool model_path = target.starts_with("/v1/models/") && target.size() > 11;
  if (!found && !model_path) {
    return error_answer(ApiError::request_error(
        404, "unknown_url",
        fmt::format("Unknown request URL: {} {}. See docs/server.md for the endpoints.",
                    shown_client_text(as_view(request.method_string())),
                    shown_client_text(target))));
  }
  // Over a connection limit, only probes are answered (connection_admission.h).
  const bool probe = method == http::verb::get &&
                     (target == "/health" || target == "/ready" || target == "/metrics");
  if (context.connection_class != ConnectionClass::kServed && !probe) {
    return error_answer(reserve_error(context));
  }
  const http::verb allowed = found ? found->method : http::verb::get;
  if (method != allowed) {
    const std::string allowed_name(http::to_string(allowed));
    return error_answer(
        ApiError::request_error(405, "method_not_allowed",
                                fmt::format("Method {} is not allowed on {}; use {}.",
                                            shown_client_text(as_view(request.method_string())),
                                            shown_client_text(target), allowed_name)),
        fmt::format("Allow: {}\r\n", allowed_name));
  }
  if (model_path) {
    const std::string name(target.substr(11));
    if (const auto id = context.node->find_model(name)) {
      const ModelSpec& model = context.node->model(*id);
      return answer(200, nlohmann::json{{"id", model.name},
                                        {"object", "model"},
                                        {"created", 0},
                                        {"owned_by", "gangway"},
                                        {"max_model_len", model.max_context_tokens}}
                             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    ApiError error = ApiError::request_error(
        404, "model_not_found", "The model '" + shown_client_text(name) + "' does not exist.");
    error.param = "model";
    return error_answer(error);
  }
  if (target == "/v1/completions")
    return route_generation(request, Endpoint::kCompletions, context);
  if (target == "/v1/chat/completions") {
    return route_generation(request, Endpoint::kChatCompletions, context);
  }
  if (target == "/v1/models") return answer(200, *context.models_body);
  if (target == "/ready") {
    return context.draining ? answer(503, R"({"status":"draining"})")
                            : answer(200, R"({"status":"ready"})");
  }
  RoutedRequest routed;
  routed.kind = RoutedRequest::Kind::kQuery;
  routed.query = target == "/health"    ? LoopQuery::kHealth
                 : target == "/metrics" ? LoopQuery::kMetrics
                                        : LoopQuery::kLoad;
  routed.content_type = routed.query == LoopQuery::kMetrics
                            ? "text/plain; version=0.0.4; charset=utf-8"
                            : "application/json";
  return routed;
}

}  // namespace gangway
