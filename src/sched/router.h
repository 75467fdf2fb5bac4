// The extension point that decides where a small-model request waits: bound to one replica's
// queue at arrival (cache- or load-aware routing), or left in its model's shared queue for the
// first replica with room to take (late binding). Replicas always serve their own queue first
// and then the shared one. A router may also let an idle replica steal a request queued at
// another replica (work stealing), which corrects a binding that turned out wrong.
//
// Routers are chosen by name (sched/router_registry.h: scheduler.routing, --routing); gangway's
// own is predicted-ttft (routers/predicted_ttft_router.cc), the others are baselines.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/time.h"
#include "sched/scheduler_view.h"

namespace gangway {

class Router {
 public:
  virtual ~Router() = default;
  virtual std::string_view name() const = 0;
  // Index into state.replicas() of the replica to queue at, or nothing for the model's shared
  // queue.
  virtual std::optional<uint32_t> route(const SchedulerView& state, const Sequence& seq,
                                        Time now) = 0;
  // Replica `idle` (index into state.replicas()) has nothing to run and nothing queued: a request
  // queued at another replica of its model that should move here, if any. Default: none.
  virtual std::optional<SequenceHandle> steal(const SchedulerView& state, uint32_t idle, Time now) {
    (void)state;
    (void)idle;
    (void)now;
    return std::nullopt;
  }
};

// Leaves every request in its model's shared queue: an idle replica takes the oldest. With one
// shared queue and c replicas the node is a c-server queue (M/M/c in the validation runs).
class LateBindingRouter final : public Router {
 public:
  std::string_view name() const override { return "late-binding"; }
  std::optional<uint32_t> route(const SchedulerView&, const Sequence&, Time) override {
    return std::nullopt;
  }
};

}  // namespace gangway
