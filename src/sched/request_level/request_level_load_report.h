// The load report (sched/load_report.h) of the request-level core: the same keys that the
// iteration-level scheduler publishes, computed from what gangway knows of its engines, so that
// /load, /metrics' load gauges, Retry-After and the agent check (sim/cluster_agent_reply.h) mean
// the same in front of engine processes:
//  - queued and running per model and class: the core's queues and the requests dispatched to
//    engines and not ended (paused ones included);
//  - predicted_wait_ms: until the model's tier holds the GPUs (the tier planner's next hand-over
//    plus the measured switch latency), plus the queue ahead drained at the rate the model's
//    engines complete requests (their concurrency over the measured dispatch-to-end time);
//  - kv_usage: the reserved KV tokens over the engines' KV capacity;
//  - headroom_rps: more requests per second before the predicted wait reaches the tightest TTFT
//    target, at the same completion rate; 0 when no engine of the model is healthy;
//  - gang: the large model's tier as a lease: active while it holds the GPUs, pending while it
//    has work and waits for them (lease_start_s: the predicted hand-over), off otherwise;
//  - overload: rung "normal" (the request-level core has no ladder), pressure the largest
//    predicted wait over the TTFT target.
#pragma once

#include "core/time.h"
#include "sched/load_report.h"
#include "sched/request_level/request_level_core.h"

namespace gangway {

// The dispatch-to-end time a model's request is counted with before one has completed.
inline constexpr Duration kUnmeasuredServiceTime = std::chrono::seconds(1);

LoadReport compute_load_report(const RequestLevelCore& core, Time now);

}  // namespace gangway
