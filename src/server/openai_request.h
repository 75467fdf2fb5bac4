// Reads an OpenAI-compatible generation request (POST /v1/completions or /v1/chat/completions)
// into what the scheduler needs: model, SLO class, tenant, deadline, prompt length and prefix
// block hashes (by the emulated tokenizer), token limits, and how to answer (streaming, usage).
//
// Validation answers like OpenAI's API does: the first problem found, as a 400 (or 404 for an
// unknown model) with the offending parameter named, so the client can fix its request; nothing
// invalid reaches the scheduler. Fields that only change sampling (temperature, top_p, stop,
// seed, ...) are accepted and ignored: the emulated engine does not sample. Pure functions;
// thread-safe. docs/server.md lists every field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/node_spec.h"
#include "core/request.h"
#include "server/api_error.h"

namespace gangway {

enum class Endpoint : uint8_t { kCompletions, kChatCompletions };

// Scheduling fields a gateway may set as headers (they win over the body's fields).
struct SchedulingHeaders {
  std::optional<std::string> slo_class;      // X-Gangway-Slo-Class
  std::optional<std::string> tenant;         // X-Gangway-Tenant
  std::optional<std::string> ttft_deadline;  // X-Gangway-Ttft-Deadline-Ms
};

// What requests are checked against; built once per server.
struct ApiContext {
  const NodeSpec* node = nullptr;
  std::vector<std::string> tenants;  // by TenantId value
  SloClassId default_slo_class;
  // Deeper bodies are refused before they are parsed (server.max_json_depth).
  int max_json_depth = 64;
};

struct GenerationRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  ModelId model;
  SloClassId slo_class;
  TenantId tenant;
  bool stream = false;
  bool include_usage = false;
  int32_t prompt_tokens = 0;
  std::vector<BlockHash> prefix_blocks;
  int32_t max_tokens = 0;
  // Whether the client gave max_tokens (else it is what the context leaves).
  bool max_tokens_given = false;
  bool ignore_eos = false;
  std::optional<int32_t> min_tokens;
  // Relative to the request's arrival.
  std::optional<Duration> ttft_deadline;
};

// A chat request's messages become one prompt text before tokenizing, like a chat template:
// "<|role|>\ncontent\n" per message, then "<|assistant|>\n" (the generation prompt).
std::variant<GenerationRequest, ApiError> parse_generation_request(Endpoint endpoint,
                                                                   std::string_view body,
                                                                   const SchedulingHeaders& headers,
                                                                   const ApiContext& context);

}  // namespace gangway
