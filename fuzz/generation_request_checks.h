// What the fuzz targets of `gangway serve`'s request path assert: a failed check aborts, which
// the fuzzer reports with the input; a generation request that reaches the scheduler is one it
// can take (a prompt and a max_tokens that fit the model's context, a min_tokens within
// max_tokens, a deadline not in the past).
#pragma once

#include <cstdlib>

#include "core/node_spec.h"
#include "server/openai_request.h"

namespace gangway::fuzz {

inline void check(bool holds) {
  if (!holds) std::abort();
}

inline void check_schedulable(const GenerationRequest& request, const NodeSpec& node) {
  const ModelSpec& model = node.model(request.model);
  check(request.prompt_tokens >= 1 && request.prompt_tokens < model.max_context_tokens);
  check(request.max_tokens >= 1 &&
        request.max_tokens <= model.max_context_tokens - request.prompt_tokens);
  check(!request.min_tokens ||
        (*request.min_tokens >= 1 && *request.min_tokens <= request.max_tokens));
  check(!request.ttft_deadline || request.ttft_deadline->count() >= 0);
}

}  // namespace gangway::fuzz
