// The body `gangway serve` sends to an engine for a client's generation request: the client's
// own JSON with the model renamed to the name the engine serves it under, streaming turned on
// with usage (the proxy needs every token as it comes to account TTFT and TPOT, and the
// engine's own token counts at the end, whatever the client asked for), and gangway's
// scheduling fields (slo_class, tenant, ttft_deadline_ms) taken out. Every other field, sampling
// included, goes through as the client wrote it.
#pragma once

#include <string>
#include <string_view>

namespace gangway {

// `client_body` has been validated (parse_generation_request) and is a JSON object. Throws
// nlohmann's exception only on a body that is not JSON (never for a validated one).
std::string make_upstream_body(std::string_view client_body, const std::string& served_model_name);

}  // namespace gangway
