#include "model/linear_cost_model.h"

#include <gtest/gtest.h>

#include <string>

namespace gangway {
namespace {

LinearCostCoefficients example() {
  LinearCostCoefficients c;
  c.base_s = 0.004;
  c.per_prefill_token_s = 3e-5;
  c.per_decode_seq_s = 2e-5;
  c.per_kv_token_s = 4e-8;
  return c;
}

TEST(LinearCostModelTest, EvaluatesTheFormula) {
  const LinearCostModel model(example());
  BatchShape b;
  b.prefill_tokens = 256;
  b.prefill_seqs = 1;
  b.prefill_context_tokens = 1000;
  b.decode_seqs = 40;
  b.decode_context_tokens = 40000;
  const double expected = 0.004 + 3e-5 * 256 + 2e-5 * 40 + 4e-8 * (40000 + 1000);
  EXPECT_EQ(model.iteration_time(b), seconds_to_duration(expected));
  EXPECT_EQ(model.kind(), CostModelKind::kLinear);
}

TEST(LinearCostModelTest, EachTermCountsSeparately) {
  const LinearCostModel model(example());
  BatchShape one_decode;
  one_decode.decode_seqs = 1;
  BatchShape with_kv = one_decode;
  with_kv.decode_context_tokens = 1'000'000;
  EXPECT_EQ(model.iteration_time(with_kv) - model.iteration_time(one_decode),
            seconds_to_duration(4e-8 * 1'000'000));
}

TEST(LinearCostModelTest, SpecRoundTrip) {
  CostModelSpec spec;
  example().write_to(spec);
  EXPECT_EQ(spec.kind, CostModelKind::kLinear);
  const LinearCostCoefficients back = LinearCostCoefficients::from_spec(spec);
  EXPECT_EQ(back.base_s, 0.004);
  EXPECT_EQ(back.per_prefill_token_s, 3e-5);
  EXPECT_EQ(back.per_decode_seq_s, 2e-5);
  EXPECT_EQ(back.per_kv_token_s, 4e-8);
}

TEST(LinearCostModelTest, RejectsNegativeCoefficientsAndAnAllZeroModel) {
  LinearCostCoefficients negative = example();
  negative.per_decode_seq_s = -1e-6;
  try {
    LinearCostModel model(negative);
    FAIL() << "accepted a negative coefficient";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cost.linear_per_decode_seq_s"), std::string::npos);
  }
  EXPECT_THROW(LinearCostModel(LinearCostCoefficients{}), std::invalid_argument);
}

}  // namespace
}  // namespace gangway
