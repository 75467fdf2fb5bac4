#include "model/constant_cost_model.h"

#include <gtest/gtest.h>

#include <limits>

namespace gangway {
namespace {

TEST(ConstantCostModelTest, SameTimeWhateverTheBatch) {
  const ConstantCostModel model(0.01);
  BatchShape small;
  small.decode_seqs = 1;
  BatchShape big;
  big.decode_seqs = 256;
  big.decode_context_tokens = 8'000'000;
  big.prefill_tokens = 2048;
  big.prefill_seqs = 4;
  big.prefill_context_tokens = 30000;
  EXPECT_EQ(model.iteration_time(small), Duration(10'000'000));
  EXPECT_EQ(model.iteration_time(big), Duration(10'000'000));
  EXPECT_EQ(model.kind(), CostModelKind::kConstant);
}

TEST(ConstantCostModelTest, RejectsNonPositiveAndSubNanosecondTimes) {
  EXPECT_THROW(ConstantCostModel(0.0), std::invalid_argument);
  EXPECT_THROW(ConstantCostModel(-1.0), std::invalid_argument);
  EXPECT_THROW(ConstantCostModel{std::numeric_limits<double>::quiet_NaN()}, std::invalid_argument);
  EXPECT_THROW(ConstantCostModel{std::numeric_limits<double>::infinity()}, std::invalid_argument);
  EXPECT_THROW(ConstantCostModel(1e-10), std::invalid_argument);
  EXPECT_EQ(ConstantCostModel(1e-9).iteration_time(BatchShape{0, 0, 0, 1, 0}), Duration(1));
}

}  // namespace
}  // namespace gangway
