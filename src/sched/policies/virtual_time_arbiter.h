// Weighted fair sharing of GPU-time between two flows, the large model's gang and the pool of
// small models, by start-time fair queueing over GPU-seconds. Each flow has a virtual time: the
// GPU-seconds it has used divided by its weight. The flow that is behind goes next. A flow that
// had no work does not bank credit for the idle time: when it becomes backlogged again its
// virtual time is lifted to the other's (the SFQ rule), so sharing is work-conserving and a
// burst cannot claim the past.
//
// Why virtual time rather than fixed windows: it adapts to the real mix (a light large load
// gets served at once, a heavy one gets its share and no more), it charges the large model for
// the barrier GPU-time it causes, and it yields the waiting-time bounds in
// docs/gang-scheduling.md as simple functions of the weights and the lease length.
#pragma once

#include "core/time.h"

namespace gangway {

class VirtualTimeArbiter {
 public:
  VirtualTimeArbiter(double large_weight, double small_weight, int gpu_count)
      : large_weight_(large_weight), small_weight_(small_weight), gpu_count_(gpu_count) {}

  // The overload ladder's weight shift (docs/overload.md): the large flow's weight is its
  // configured weight times `factor`, which the ladder keeps within [1 / max_factor,
  // max_factor]. Virtual times already accrued stay as they are; what is charged from now on
  // is divided by the new weight.
  void set_large_weight_factor(double factor) { large_factor_ = factor; }
  // New weights for what is charged from now on (the demand-driven split sets them at every
  // decision; virtual times already accrued stay as they are).
  void set_weights(double large_weight, double small_weight) {
    large_weight_ = large_weight;
    small_weight_ = small_weight;
  }
  double large_weight() const { return large_weight_ * large_factor_; }

  // One small-model iteration of `time` on one GPU.
  void charge_small(Duration time) { small_ += to_seconds(time) / small_weight_; }
  // Gang time (all GPUs for `time`), including the barrier it caused.
  void charge_large(Duration time) { large_ += gpu_count_ * to_seconds(time) / large_weight(); }
  // GPU-seconds of barrier idling charged to the large flow.
  void charge_large_gpu_seconds(double gpu_seconds) { large_ += gpu_seconds / large_weight(); }

  // Called with the flows' backlog at each decision; applies the SFQ catch-up rule.
  void observe_backlog(bool large_backlogged, bool small_backlogged) {
    if (large_backlogged && !large_was_backlogged_ && large_ < small_) large_ = small_;
    if (small_backlogged && !small_was_backlogged_ && small_ < large_) small_ = large_;
    large_was_backlogged_ = large_backlogged;
    small_was_backlogged_ = small_backlogged;
  }

  // Whether the large flow, after using `extra` more gang time, is still within its share.
  bool large_within_share(Duration extra = Duration(0)) const {
    return large_ + gpu_count_ * to_seconds(extra) / large_weight() <= small_;
  }
  // How far the large flow is ahead of its share, in virtual seconds (negative: behind).
  double large_lead() const { return large_ - small_; }
  double large_virtual() const { return large_; }
  double small_virtual() const { return small_; }

 private:
  double large_weight_;
  double large_factor_ = 1.0;
  double small_weight_;
  int gpu_count_;
  double large_ = 0;
  double small_ = 0;
  bool large_was_backlogged_ = false;
  bool small_was_backlogged_ = false;
};

}  // namespace gangway
