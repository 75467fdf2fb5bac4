#include "config/scenario_source.h"

#include "workload/trace/trace_source.h"
#include "workload/workload.h"

namespace gangway {

std::unique_ptr<RequestSource> make_request_source(const Scenario& scenario) {
  if (scenario.trace) {
    return std::make_unique<TraceSource>(*scenario.trace, scenario.seed,
                                         scenario.node.kv_block_tokens);
  }
  WorkloadOptions options;
  options.seed = scenario.seed;
  options.duration = scenario.duration;
  options.kv_block_tokens = scenario.node.kv_block_tokens;
  return std::make_unique<Workload>(scenario.streams, options);
}

}  // namespace gangway
