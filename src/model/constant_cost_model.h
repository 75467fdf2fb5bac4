// A cost model in which every iteration takes the same time, whatever the batch. It makes the
// simulated node a textbook queue, so that the simulator's waits can be checked against the
// M/M/1, M/D/1, M/G/1 and M/M/c closed forms (docs/validation.md) before any realistic model is
// trusted. Immutable and thread-safe.
#pragma once

#include "core/time.h"
#include "model/cost_model.h"

namespace gangway {

class ConstantCostModel final : public CostModel {
 public:
  // Throws std::invalid_argument as validate() does.
  explicit ConstantCostModel(double iteration_s);

  // iteration_s finite and > 0 (a zero-time iteration would stall virtual time); throws
  // std::invalid_argument naming "cost.constant_iteration_s".
  static void validate(double iteration_s);

  Duration iteration_time(const BatchShape& batch) const override;
  CostModelKind kind() const override { return CostModelKind::kConstant; }

 private:
  Duration iteration_time_;
};

}  // namespace gangway
