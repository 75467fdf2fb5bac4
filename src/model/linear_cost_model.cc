#include "model/linear_cost_model.h"

#include "model/field_checks.h"

namespace gangway {

LinearCostCoefficients LinearCostCoefficients::from_spec(const CostModelSpec& cost) {
  LinearCostCoefficients coefficients;
  coefficients.base_s = cost.linear_base_s;
  coefficients.per_prefill_token_s = cost.linear_per_prefill_token_s;
  coefficients.per_decode_seq_s = cost.linear_per_decode_seq_s;
  coefficients.per_kv_token_s = cost.linear_per_kv_token_s;
  return coefficients;
}

void LinearCostCoefficients::write_to(CostModelSpec& cost) const {
  cost.kind = CostModelKind::kLinear;
  cost.linear_base_s = base_s;
  cost.linear_per_prefill_token_s = per_prefill_token_s;
  cost.linear_per_decode_seq_s = per_decode_seq_s;
  cost.linear_per_kv_token_s = per_kv_token_s;
}

void LinearCostModel::validate(const LinearCostCoefficients& coefficients) {
  using field_checks::require_non_negative;
  require_non_negative("cost.linear_base_s", coefficients.base_s);
  require_non_negative("cost.linear_per_prefill_token_s", coefficients.per_prefill_token_s);
  require_non_negative("cost.linear_per_decode_seq_s", coefficients.per_decode_seq_s);
  require_non_negative("cost.linear_per_kv_token_s", coefficients.per_kv_token_s);
  const double sum = coefficients.base_s + coefficients.per_prefill_token_s +
                     coefficients.per_decode_seq_s + coefficients.per_kv_token_s;
  if (!(sum > 0.0)) {
    field_checks::reject("cost.linear_*",
                         "at least one of linear_base_s, linear_per_prefill_token_s, "
                         "linear_per_decode_seq_s, linear_per_kv_token_s > 0 (their sum)",
                         sum);
  }
}

LinearCostModel::LinearCostModel(const LinearCostCoefficients& coefficients)
    : coefficients_(coefficients) {
  validate(coefficients_);
}

Duration LinearCostModel::iteration_time(const BatchShape& batch) const {
#if defined(GANGWAY_CHECK_INVARIANTS)
  if (!is_valid_batch_shape(batch)) check_batch_shape(batch);
#endif
  return seconds_to_duration(coefficients_.seconds(batch));
}

}  // namespace gangway
