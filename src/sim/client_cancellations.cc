#include "sim/client_cancellations.h"

#include <cmath>

namespace gangway {

const char* to_string(CancelStage stage) {
  switch (stage) {
    case CancelStage::kQueued:
      return "queued";
    case CancelStage::kPrefilling:
      return "prefilling";
    case CancelStage::kDecoding:
      return "decoding";
    case CancelStage::kGangPhase:
      return "gang_phase";
    case CancelStage::kSwapped:
      return "swapped";
    case CancelStage::kDisconnect:
      return "disconnect";
    case CancelStage::kDelay:
      return "delay";
  }
  return "?";
}

ClientCancellations::ClientCancellations(ClientCancellationSpec spec)
    : spec_(spec), rng_(spec.seed), issued_(kCancelStages, 0) {}

void ClientCancellations::on_submitted(const RequestSpec& spec, const SubmitResult& result,
                                       Time now) {
  if (!enabled() || !result.accepted) return;
  if (rng_.uniform01() >= spec_.fraction) return;
  Pending pending;
  pending.id = spec.id;
  pending.handle = result.handle;
  pending.stage = static_cast<CancelStage>(rng_.uniform_int(kCancelStages));
  pending.tokens = 1 + static_cast<int32_t>(rng_.uniform_int(32));
  // 0.1 ms to 3 s, log-uniform: a delay lands in any stage of a request's life.
  pending.at = now + seconds_to_duration(1e-4 * std::pow(3e4, rng_.uniform01()));
  pending_.push_back(pending);
}

bool ClientCancellations::reached(const Pending& pending, const Sequence& seq,
                                  const SchedulerState& state, Time now) const {
  switch (pending.stage) {
    case CancelStage::kQueued:
      return seq.state == SequenceState::kQueued;
    case CancelStage::kPrefilling:
      return seq.state == SequenceState::kRunning && !seq.prefill_done();
    case CancelStage::kDecoding:
      return seq.state == SequenceState::kRunning && seq.prefill_done() && seq.generated_tokens > 0;
    case CancelStage::kGangPhase:
      return state.gang.phase == GangPhase::kActive;
    case CancelStage::kSwapped:
      return seq.swapped || (seq.state == SequenceState::kRunning && seq.kv_ready > now);
    case CancelStage::kDisconnect:
      return seq.generated_tokens >= pending.tokens;
    case CancelStage::kDelay:
      return now >= pending.at;
  }
  return false;
}

void ClientCancellations::due(const Scheduler& scheduler, Time now, std::vector<RequestId>& out) {
  const SchedulerState& state = scheduler.state();
  size_t kept = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    const Pending& pending = pending_[i];
    const Sequence& seq = state.sequences[pending.handle];
    // Ended (its slot free, or already reused by a later request): nothing to cancel.
    if (seq.state == SequenceState::kFinished || seq.spec.id != pending.id) continue;
    // A stage is met now; a coin decides whether at this event or a later one.
    if (reached(pending, seq, state, now) &&
        (pending.stage == CancelStage::kDelay || pending.stage == CancelStage::kDisconnect ||
         rng_.uniform01() < 0.5)) {
      out.push_back(pending.id);
      ++issued_[static_cast<size_t>(pending.stage)];
      continue;
    }
    pending_[kept++] = pending;
  }
  pending_.resize(kept);
}

}  // namespace gangway
