// Backfill for exclusive (request-level) gang scheduling. When the gang is wanted, every GPU
// must first drain its resident small-model requests. The shadow time is when the last GPU is
// predicted to be drained; a queued small request may still start (backfill) if it is predicted
// to finish before the shadow time, so GPUs that drain early keep working without delaying the
// gang. Predictions come from the output-length predictor: its mean (EASY) or its 90th
// percentile (conservative backfill, which is wrong less often at the price of less backfill).
//
// Per-GPU drain times change only when a GPU finishes an iteration, so they are recomputed for
// that GPU then, not on every decision (the decision path stays O(GPUs)).
#pragma once

#include <vector>

#include "core/time.h"
#include "sched/scheduler_view.h"

namespace gangway {

class BackfillPlanner {
 public:
  explicit BackfillPlanner(bool conservative) : conservative_(conservative) {}

  // Marks a GPU's drain estimate stale (call when its iteration finishes).
  void invalidate(GpuId gpu);
  // Brings stale estimates up to date.
  void refresh(const SchedulerView& state, Time now);
  // Predicted time every GPU is free of resident small requests (now if none are resident).
  Time shadow_time(Time now) const;
  // Predicted drain time of one GPU.
  Time drain_time(GpuId gpu) const { return drain_[gpu.value()]; }
  // Whether `seq`, started on `replica` now, is predicted to end by `deadline`.
  bool ends_by(const SchedulerView& state, const Replica& replica, const Sequence& seq, Time now,
               Time deadline) const;
  // Predicted remaining time of a resident sequence on its GPU (mean prediction).
  Duration expected_remaining(const SchedulerView& state, const Sequence& seq,
                              const GpuRuntime& gpu) const;

 private:
  double remaining_iterations(const SchedulerView& state, const Sequence& seq,
                              bool conservative) const;
  Duration step_time(const SchedulerView& state, const GpuRuntime& gpu) const;

  bool conservative_;
  std::vector<Time> drain_;
  std::vector<bool> stale_;
};

}  // namespace gangway
