// Errors as vLLM's OpenAI server reports them: an HTTP status and the body
// {"error": {"message": ..., "type": ..., "param": ..., "code": <the status>}}, with vLLM's type
// names (BadRequestError 400, NotFoundError 404, InternalServerError 500). Routes that are not
// there, and methods a route does not take, answer as vLLM's web framework does:
// {"detail": "Not Found"} (404) and {"detail": "Method Not Allowed"} (405).
#pragma once

#include <string>

namespace gangway {

struct EngineApiError {
  int status = 400;
  std::string type = "BadRequestError";
  std::string message;
  std::string param;  // empty: null

  static EngineApiError bad_request(std::string message, std::string param = "") {
    return EngineApiError{400, "BadRequestError", std::move(message), std::move(param)};
  }
  static EngineApiError not_found(std::string message) {
    return EngineApiError{404, "NotFoundError", std::move(message), ""};
  }
};

// The body, as compact JSON.
std::string engine_error_body(const EngineApiError& error);

}  // namespace gangway
