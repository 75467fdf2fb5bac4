// Factories of the routers in this folder, for sched/router_registry.cc, and the load measure
// the load-aware baselines share.
#pragma once

#include <cstdint>
#include <memory>

#include "sched/router.h"

namespace gangway {

std::unique_ptr<Router> make_predicted_ttft_router();
std::unique_ptr<Router> make_round_robin_router();
std::unique_ptr<Router> make_least_loaded_router();
std::unique_ptr<Router> make_cache_only_router();
std::unique_ptr<Router> make_sglang_router();

// Outstanding requests at a replica (resident, paused and queued): what a load balancer that
// counts requests in flight per worker sees.
inline int64_t outstanding_requests(const Replica& replica) {
  return static_cast<int64_t>(replica.running.size() + replica.paused.size() +
                              replica.queue.size());
}

// Among the live replicas of the request's model, the one with the fewest outstanding requests
// (ties: fewer queued prefill tokens, then the lower index); nothing if none is live.
std::optional<uint32_t> least_loaded_replica(const SchedulerView& state, const Sequence& seq);

}  // namespace gangway
