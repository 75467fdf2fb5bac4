// The HTTP calls that pause, resume and probe one engine, by kind (docs/engines.md):
//  - vLLM (with VLLM_SERVER_DEV_MODE=1): POST /pause?mode=keep&clear_cache=false (requests stay
//    where they are, KV and prefix cache kept), POST /resume, GET /health;
//  - SGLang: POST /pause_generation {"mode": "in_place"}, POST /continue_generation, GET /health;
//  - any OpenAI server: no pause or resume; GET /v1/models as the health probe.
#pragma once

#include <string>

#include "config/engine_config.h"
#include "engine/upstream_call.h"

namespace gangway {

enum class EngineCall : uint8_t { kPause, kResume, kHealth };

const char* to_string(EngineCall call);

// The request for `call` to the engine at `endpoint`; `timeout` bounds the whole call.
UpstreamRequest engine_control_request(EngineKind kind, EngineCall call,
                                       const EngineEndpoint& endpoint, Duration timeout);

}  // namespace gangway
