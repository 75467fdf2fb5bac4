// The HTTP request path of `gangway serve` up to the scheduler, on arbitrary bytes: Beast's
// request parser with the server's limits, then route_request() (HTTP/1.1's rules, routing,
// the probe reserve, the OpenAI request parser, draining) for each request the bytes hold, as a
// pipelining client would send them. Every answer must be valid JSON of bounded size, and every
// generation request that reaches the scheduler must be one it can take (a prompt and a
// max_tokens that fit the model's context).
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "config/scenario.h"
#include "generation_request_checks.h"
#include "server/request_router.h"

namespace {

namespace http = boost::beast::http;
using gangway::fuzz::check;

constexpr const char* kScenario = R"(
name: fuzz
models:
  - {name: small, tier: small, shape: llama-3-8b, max_context_tokens: 4096}
  - {name: large, tier: large, shape: llama-3-70b, tensor_parallel: 8, max_context_tokens: 4096}
tenants: [default, acme]
workload:
  streams:
    - {name: s, model: small, arrival: {rate_per_s: 1}, prompt_tokens: 8, output_tokens: 4}
server: {max_header_kib: 16, max_body_kib: 64, max_json_depth: 64}
)";

struct Setup {
  gangway::Scenario scenario = gangway::parse_scenario(kScenario, "fuzz.yaml");
  gangway::ApiContext api;
  std::string models_body = R"({"object":"list","data":[]})";
  Setup() {
    api.node = &scenario.node;
    api.tenants = scenario.tenants;
    api.max_json_depth = scenario.server.max_json_depth;
  }
};

void check_routed(const gangway::RoutedRequest& routed, const gangway::NodeSpec& node) {
  using Kind = gangway::RoutedRequest::Kind;
  if (routed.kind == Kind::kAnswer) {
    // Valid JSON (a strict parse), and client text repeated only in part.
    check(nlohmann::json::accept(routed.body));
    check(routed.body.size() < 4096 || routed.status == 200);
    return;
  }
  if (routed.kind != Kind::kGenerate) return;
  gangway::fuzz::check_schedulable(routed.generation, node);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Setup setup;
  if (size < 1) return 0;
  gangway::RouterContext context;
  context.node = &setup.scenario.node;
  context.api = &setup.api;
  context.config = &setup.scenario.server;
  context.models_body = &setup.models_body;
  // The first byte picks the server's state: draining, and the connection's class.
  context.draining = (data[0] & 1) != 0;
  context.connection_class = static_cast<gangway::ConnectionClass>((data[0] >> 1) % 3);
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (int requests = 0; requests < 8 && !bytes.empty(); ++requests) {
    http::request_parser<http::string_body> parser;
    parser.eager(true);
    parser.header_limit(static_cast<uint32_t>(setup.scenario.server.max_header_bytes));
    parser.body_limit(static_cast<uint64_t>(setup.scenario.server.max_body_bytes));
    boost::system::error_code error;
    while (!parser.is_done() && !bytes.empty()) {
      const size_t used = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), error);
      bytes.remove_prefix(used);
      if (error || used == 0) break;
    }
    if (!parser.is_done()) return 0;  // incomplete or malformed: the server answers 4xx or waits
    check_routed(gangway::route_request(parser.get(), context), setup.scenario.node);
  }
  return 0;
}
