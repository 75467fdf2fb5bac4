// Clients that give up, injected into a simulation: a share of the requests is cancelled by its
// client (Scheduler::cancel), each at a stage of its life drawn at arrival, so that a random
// search reaches every path a cancellation can take through the core:
//   queued      while it waits in a queue
//   prefilling  resident, its prompt not yet all computed
//   decoding    resident, generating
//   gang_phase  while the gang holds the GPUs (a large request running, or a small one waiting
//               or paused for the gang)
//   swapped     while its KV is in host memory, or being copied back
//   disconnect  a streaming client that goes away after its n-th token
//   delay       after a delay drawn from its arrival, whatever it is doing then
// A request that never reaches its drawn stage is not cancelled. Each is checked after every
// event, and at a stage it is cancelled at that event or a later one (a coin each time), so
// that cancellations land early and late within a stage. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/scheduler.h"
#include "workload/rng.h"

namespace gangway {

struct ClientCancellationSpec {
  // Share of requests whose client cancels, in [0, 1]; 0: none (the default).
  double fraction = 0;
  uint64_t seed = 1;
};

enum class CancelStage : uint8_t {
  kQueued,
  kPrefilling,
  kDecoding,
  kGangPhase,
  kSwapped,
  kDisconnect,
  kDelay,
};
inline constexpr int kCancelStages = 7;
const char* to_string(CancelStage stage);

class ClientCancellations {
 public:
  explicit ClientCancellations(ClientCancellationSpec spec);

  bool enabled() const { return spec_.fraction > 0; }
  // A request was submitted: draws whether and at which stage its client cancels.
  void on_submitted(const RequestSpec& spec, const SubmitResult& result, Time now);
  // After an event: the requests to cancel now (appended to `out`). Forgets those that ended.
  void due(const Scheduler& scheduler, Time now, std::vector<RequestId>& out);
  // Cancellations issued so far, by stage.
  const std::vector<int64_t>& issued() const { return issued_; }

 private:
  struct Pending {
    RequestId id;
    SequenceHandle handle;
    CancelStage stage;
    int32_t tokens = 0;  // disconnect: after this many generated tokens
    Time at;             // delay: from this time on
  };
  bool reached(const Pending& pending, const Sequence& seq, const SchedulerState& state,
               Time now) const;

  ClientCancellationSpec spec_;
  Rng rng_;
  std::vector<Pending> pending_;
  std::vector<int64_t> issued_;
};

}  // namespace gangway
