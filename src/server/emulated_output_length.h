// How many tokens the emulated engine generates for a request: the documented stand-in for a
// model deciding when to stop (docs/server.md, "Emulated output length").
//
// In order: ignore_eos -> max_tokens (vLLM's benchmark flag); min_tokens -> exactly min_tokens
// (the emulated model stops at the first token it is allowed to, which is how `gangway load`
// replays a workload's true output lengths exactly); otherwise the server's
// emulated_output_tokens rule: max_tokens, a draw from a configured distribution, or (default)
// a draw from the scenario's own output length distribution for the request's model and class
// (the first workload stream with that model and class, else with that model, else a geometric
// distribution of mean 128). Draws come from one Rng seeded by the scenario's seed, in the order
// requests reach the scheduler. Never more than max_tokens, never less than 1.
//
// Not thread-safe: the scheduler loop's thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "config/scenario.h"
#include "config/server_config.h"
#include "workload/length_sampler.h"
#include "workload/rng.h"

namespace gangway {

class EmulatedOutputLength {
 public:
  EmulatedOutputLength(const Scenario& scenario, const EmulatedOutputSpec& rule);

  int32_t choose(ModelId model, SloClassId slo_class, int32_t max_tokens, bool ignore_eos,
                 std::optional<int32_t> min_tokens);

 private:
  EmulatedOutputSpec::Kind kind_;
  size_t class_count_;
  std::vector<LengthSampler> samplers_;  // the distinct distributions
  std::vector<size_t> sampler_by_pair_;  // [model][class] -> index into samplers_
  Rng rng_;
};

}  // namespace gangway
