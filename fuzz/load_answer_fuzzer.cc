// `gangway load` on arbitrary bytes: its --url parser (parse_load_url) on the input's first
// line, then the rest as a server's whole answer to one request, read through the load
// generator's real path (a loopback socket, its non-blocking reads, Beast's response parser,
// the SSE splitter and chunk reader, the error body of a non-200 answer). Whatever the server
// sends, the URL is parsed or refused with InputError, and the request is counted exactly once
// (completed, rejected or failed; never left open until the drain timeout), with no negative
// token count.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "client/load_generator.h"
#include "config/scenario.h"
#include "core/input_error.h"
#include "server/loopback_answer_server_for_tests.h"

namespace {

constexpr const char* kScenario = R"(
name: fuzz
models:
  - {name: small, tier: small, shape: llama-3-8b}
workload:
  streams:
    - {name: s, model: small, arrival: {rate_per_s: 1}, prompt_tokens: 8, output_tokens: 4}
)";

void check(bool holds) {
  if (!holds) std::abort();
}

// One request at time zero.
class OneRequest final : public gangway::RequestSource {
 public:
  std::optional<gangway::Time> peek_arrival() const override {
    if (sent_) return std::nullopt;
    return gangway::Time::zero();
  }
  std::optional<gangway::WorkloadItem> next() override {
    if (sent_) return std::nullopt;
    sent_ = true;
    gangway::WorkloadItem item;
    item.spec.id = gangway::RequestId(0);
    item.spec.model = gangway::ModelId(0);
    item.spec.slo_class = gangway::SloClassId(0);
    item.spec.tenant = gangway::TenantId(0);
    item.spec.arrival = gangway::Time::zero();
    item.spec.prompt_tokens = 8;
    item.spec.max_tokens = 4;
    item.output_tokens = 2;
    return item;
  }
  size_t stream_count() const override { return 1; }
  std::string stream_name(size_t) const override { return "one"; }

 private:
  bool sent_ = false;
};

void parse_url(std::string_view line) {
  try {
    const gangway::LoadTarget target = gangway::parse_load_url(std::string(line));
    check(!target.host.empty() && target.port > 0);
  } catch (const gangway::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const gangway::Scenario scenario = gangway::parse_scenario(kScenario, "fuzz.yaml");
  static gangway::LoopbackAnswerServer server;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t line_end = input.find('\n');
  parse_url(input.substr(0, line_end));
  const std::string_view answer =
      line_end == std::string_view::npos ? std::string_view() : input.substr(line_end + 1);

  server.serve(answer);
  OneRequest source;
  gangway::LoadOptions options;
  options.target.port = server.port();
  options.duration = std::chrono::milliseconds(1);
  options.drain_timeout = std::chrono::seconds(20);
  std::optional<gangway::LoadResult> result;
  {
    gangway::LoadGenerator generator(scenario, source, options);
    result = generator.run();
  }  // closes a kept-alive connection: the server waits for that
  server.join();

  const gangway::RequestStats& total = result->metrics.total();
  check(result->sent == 1 && total.arrived() == 1 && total.finished() == 1);
  check(total.cancelled() == 0);  // the answer's end was seen, not waited out
  check(total.output_tokens() <= INT32_MAX);
  return 0;
}
