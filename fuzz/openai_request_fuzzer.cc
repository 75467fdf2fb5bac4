// The OpenAI request parser of `gangway serve` on arbitrary JSON bodies, without HTTP around
// them (far more bodies per second than http_request_fuzzer): the depth check, then
// parse_generation_request for either endpoint, with or without scheduling headers. The answer
// is a request the scheduler can take (a prompt and a max_tokens that fit the model's context)
// or one error whose body is valid JSON and short, whatever bytes the client sent.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "config/scenario.h"
#include "generation_request_checks.h"
#include "http/json_depth.h"
#include "server/api_error.h"
#include "server/openai_request.h"

namespace {

constexpr const char* kScenario = R"(
name: fuzz
models:
  - {name: small, tier: small, shape: llama-3-8b, max_context_tokens: 4096}
  - {name: large, tier: large, shape: llama-3-70b, tensor_parallel: 8, max_context_tokens: 4096}
slo_classes:
  - {name: interactive, ttft_ms: 200, tpot_ms: 50, weight: 4, rank: 0}
  - {name: standard, ttft_ms: 2000, weight: 2, rank: 1, downgrade_to: batch}
  - {name: batch, weight: 1, rank: 2}
tenants: [default, acme]
workload:
  streams:
    - {name: s, model: small, arrival: {rate_per_s: 1}, prompt_tokens: 8, output_tokens: 4}
)";

struct Setup {
  gangway::Scenario scenario = gangway::parse_scenario(kScenario, "fuzz.yaml");
  gangway::ApiContext api;
  Setup() {
    api.node = &scenario.node;
    api.tenants = scenario.tenants;
    api.max_json_depth = 64;
  }
};

using gangway::fuzz::check;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Setup setup;
  if (size < 1) return 0;
  // The first byte picks the endpoint and which scheduling headers the request carries (the
  // headers' values are fixed: http_request_fuzzer varies them).
  const uint8_t choice = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const gangway::Endpoint endpoint =
      (choice & 1) ? gangway::Endpoint::kChatCompletions : gangway::Endpoint::kCompletions;
  gangway::SchedulingHeaders headers;
  if (choice & 2) headers.slo_class = "interactive";
  if (choice & 4) headers.tenant = "acme";
  if (choice & 8) headers.ttft_deadline = "250";

  // What the server does before parsing a body: refuse one that nests too deeply.
  if (gangway::json_nests_deeper_than(body, setup.api.max_json_depth)) return 0;
  const auto parsed = gangway::parse_generation_request(endpoint, body, headers, setup.api);
  if (const auto* error = std::get_if<gangway::ApiError>(&parsed)) {
    const std::string answer = gangway::error_body(*error);
    check(nlohmann::json::accept(answer));
    check(answer.size() < 4096);
    check(error->status >= 400 && error->status < 600);
    return 0;
  }
  gangway::fuzz::check_schedulable(std::get<gangway::GenerationRequest>(parsed),
                                   setup.scenario.node);
  return 0;
}
