#include "model/constant_cost_model.h"

#include "model/field_checks.h"

namespace gangway {

void ConstantCostModel::validate(double iteration_s) {
  field_checks::require_positive("cost.constant_iteration_s", iteration_s);
  // Below half a nanosecond the rounded duration would be zero and time would stand still.
  if (seconds_to_duration(iteration_s) <= Duration::zero()) {
    field_checks::reject("cost.constant_iteration_s", "at least 1e-9 (one nanosecond)",
                         iteration_s);
  }
}

ConstantCostModel::ConstantCostModel(double iteration_s) {
  validate(iteration_s);
  iteration_time_ = seconds_to_duration(iteration_s);
}

Duration ConstantCostModel::iteration_time([[maybe_unused]] const BatchShape& batch) const {
#if defined(GANGWAY_CHECK_INVARIANTS)
  if (!is_valid_batch_shape(batch)) check_batch_shape(batch);
#endif
  return iteration_time_;
}

}  // namespace gangway
