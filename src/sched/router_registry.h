// Builds routers by name, so that the scenario's scheduler.routing and the CLI's --routing flags
// can pick any of them, and lists the names for help text and error messages.
//
//   predicted-ttft  gangway's rule: the replica with the smallest predicted TTFT (wait + load +
//                   uncached prefill), bound at arrival only when some replica holds part of the
//                   prompt (otherwise late binding), plus work stealing by idle replicas
//   late-binding    every request in the model's shared queue; the first free replica takes it
//   round-robin     replicas in turn
//   least-loaded    the replica with the fewest outstanding requests (resident + queued)
//   cache-only      the longest cached prefix, whatever the load (ties: least loaded)
//   sglang          SGLang's router (cache_aware policy): least loaded when the load is
//                   imbalanced, else the best prefix match if it covers enough of the prompt
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sched/router.h"

namespace gangway {

const std::vector<std::string>& router_names();
// Throws InputError naming "scheduler.routing" and the allowed names for an unknown one.
std::unique_ptr<Router> make_router(const std::string& name);
bool is_router_name(const std::string& name);

}  // namespace gangway
