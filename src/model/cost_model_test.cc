#include "model/cost_model.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/node_spec.h"
#include "model/roofline_cost_model.h"

namespace gangway {
namespace {

class CostModelFactoryTest : public ::testing::Test {
 protected:
  NodeSpec node = default_node_spec();
  const ModelSpec& small = node.models[0];
  const ModelSpec& large = node.models[1];
};

TEST_F(CostModelFactoryTest, BuildsTheKindTheSpecAsksFor) {
  ModelSpec spec = small;
  EXPECT_EQ(make_cost_model(spec, node.hardware)->kind(), CostModelKind::kRoofline);
  spec.cost.kind = CostModelKind::kLinear;
  spec.cost.linear_base_s = 0.005;
  EXPECT_EQ(make_cost_model(spec, node.hardware)->kind(), CostModelKind::kLinear);
  spec.cost.kind = CostModelKind::kConstant;
  spec.cost.constant_iteration_s = 0.02;
  const auto constant = make_cost_model(spec, node.hardware);
  EXPECT_EQ(constant->kind(), CostModelKind::kConstant);
  EXPECT_EQ(constant->iteration_time(BatchShape{0, 0, 0, 1, 100}), Duration(20'000'000));
}

// The constant and linear models read no shape or hardware, so a validation scenario may leave
// them unset.
TEST_F(CostModelFactoryTest, ConstantAndLinearModelsNeedNoShapeOrHardware) {
  ModelSpec spec;
  spec.cost.kind = CostModelKind::kConstant;
  EXPECT_NO_THROW(make_cost_model(spec, HardwareSpec{}));
  spec.cost.kind = CostModelKind::kLinear;
  spec.cost.linear_per_decode_seq_s = 1e-3;
  EXPECT_NO_THROW(make_cost_model(spec, HardwareSpec{}));
}

struct BadField {
  std::string field;     // what the message must name
  std::string expected;  // and a fragment of the range it must state
  CostModelKind kind;
  std::function<void(ModelSpec&, HardwareSpec&)> spoil;
};

TEST_F(CostModelFactoryTest, RejectsEachBadFieldNamingItAndTheRange) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<BadField> cases = {
      {"cost.compute_efficiency", "(0, 1]", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec&) { s.cost.compute_efficiency = 0; }},
      {"cost.compute_efficiency", "(0, 1]", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec&) { s.cost.compute_efficiency = 1.01; }},
      {"cost.compute_efficiency", "(0, 1]", CostModelKind::kRoofline,
       [nan](ModelSpec& s, HardwareSpec&) { s.cost.compute_efficiency = nan; }},
      {"cost.bandwidth_efficiency", "(0, 1]", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec&) { s.cost.bandwidth_efficiency = -0.5; }},
      {"cost.launch_overhead_s", ">= 0", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec&) { s.cost.launch_overhead_s = -1e-4; }},
      {"tensor_parallel", ">= 1", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec&) { s.tensor_parallel = 0; }},
      {"tensor_parallel", ">= 1", CostModelKind::kConstant,
       [](ModelSpec& s, HardwareSpec&) { s.tensor_parallel = -8; }},
      {"prefill_chunk_tokens", ">= 1", CostModelKind::kLinear,
       [](ModelSpec& s, HardwareSpec&) { s.prefill_chunk_tokens = 0; }},
      {"shape.layers", "> 0", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec&) { s.shape.layers = 0; }},
      {"shape.hidden", "> 0", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec&) { s.shape.hidden = -1; }},
      {"shape.q_heads", "> 0", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec&) { s.shape.q_heads = 0; }},
      {"shape.kv_heads", "> 0", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec&) { s.shape.kv_heads = 0; }},
      {"shape.kv_heads", "at most shape.q_heads", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec&) { s.shape.kv_heads = s.shape.q_heads + 1; }},
      {"shape.head_dim", "> 0", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec&) { s.shape.head_dim = 0; }},
      {"shape.parameters", "> 0", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec&) { s.shape.parameters = 0; }},
      {"shape.dtype_bytes", "> 0", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec&) { s.shape.dtype_bytes = 0; }},
      {"hardware.hbm_bytes_per_s", "> 0", CostModelKind::kRoofline,
       [](ModelSpec&, HardwareSpec& h) { h.hbm_bytes_per_s = 0; }},
      {"hardware.bf16_flops_per_s", "> 0", CostModelKind::kRoofline,
       [](ModelSpec&, HardwareSpec& h) { h.bf16_flops_per_s = 0; }},
      {"hardware.allreduce_bytes_per_s", "> 0", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec& h) {
         s.tensor_parallel = 8;
         h.allreduce_bytes_per_s = 0;
       }},
      {"hardware.allreduce_latency_s", ">= 0", CostModelKind::kRoofline,
       [](ModelSpec& s, HardwareSpec& h) {
         s.tensor_parallel = 8;
         h.allreduce_latency_s = -1e-6;
       }},
      {"cost.linear_base_s", ">= 0", CostModelKind::kLinear,
       [](ModelSpec& s, HardwareSpec&) { s.cost.linear_base_s = -1e-3; }},
      {"cost.linear_per_prefill_token_s", ">= 0", CostModelKind::kLinear,
       [](ModelSpec& s, HardwareSpec&) { s.cost.linear_per_prefill_token_s = -1e-6; }},
      {"cost.linear_per_decode_seq_s", ">= 0", CostModelKind::kLinear,
       [](ModelSpec& s, HardwareSpec&) { s.cost.linear_per_decode_seq_s = -1e-6; }},
      {"cost.linear_per_kv_token_s", ">= 0", CostModelKind::kLinear,
       [nan](ModelSpec& s, HardwareSpec&) { s.cost.linear_per_kv_token_s = nan; }},
      {"cost.linear_", "sum", CostModelKind::kLinear,
       [](ModelSpec& s, HardwareSpec&) { s.cost.linear_base_s = 0; }},
      {"cost.constant_iteration_s", "> 0", CostModelKind::kConstant,
       [](ModelSpec& s, HardwareSpec&) { s.cost.constant_iteration_s = 0; }},
  };
  for (const BadField& bad : cases) {
    ModelSpec spec = small;
    HardwareSpec hardware = node.hardware;
    spec.cost.kind = bad.kind;
    spec.cost.linear_base_s = 0.005;  // a valid linear model unless spoiled
    bad.spoil(spec, hardware);
    try {
      make_cost_model(spec, hardware);
      ADD_FAILURE() << "accepted bad " << bad.field;
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(bad.field, 0), 0u)
          << "message should start with the field: " << message;
      EXPECT_NE(message.find(bad.expected), std::string::npos)
          << "message should state the range: " << message;
    }
  }
}

TEST_F(CostModelFactoryTest, ValidateAcceptsTheDefaultNode) {
  for (const ModelSpec& spec : node.models) {
    EXPECT_NO_THROW(validate_cost_model_inputs(spec, node.hardware)) << spec.name;
  }
}

TEST_F(CostModelFactoryTest, PrefillTimeIsTheSumOfItsChunksEachSeeingThePreviousOnes) {
  ModelSpec spec = small;
  spec.prefill_chunk_tokens = 512;
  const auto model = make_cost_model(spec, node.hardware);
  // 1300 new tokens on 700 cached: chunks of 512, 512, 276 on contexts 700, 1212, 1724.
  Duration expected{0};
  const int32_t sizes[] = {512, 512, 276};
  int64_t context = 700;
  for (int32_t size : sizes) {
    expected += model->iteration_time(BatchShape{size, 1, context, 0, 0});
    context += size;
  }
  EXPECT_EQ(prefill_time(*model, spec, 1300, 700), expected);
  EXPECT_EQ(prefill_time(*model, spec, 0, 700), Duration::zero());
  // Cached tokens make a chunk's attention dearer but save the chunks they replace.
  EXPECT_GT(prefill_time(*model, spec, 1300, 700), prefill_time(*model, spec, 1300, 0));
  EXPECT_LT(prefill_time(*model, spec, 1300, 700), prefill_time(*model, spec, 2000, 0));
  EXPECT_THROW(prefill_time(*model, spec, 10, -1), std::invalid_argument);
}

TEST_F(CostModelFactoryTest, PrefillTimeWithAConstantModelCountsChunks) {
  ModelSpec spec = small;
  spec.cost.kind = CostModelKind::kConstant;
  spec.cost.constant_iteration_s = 0.01;
  spec.prefill_chunk_tokens = 512;
  const auto model = make_cost_model(spec, node.hardware);
  EXPECT_EQ(prefill_time(*model, spec, 1025, 0), Duration(30'000'000));  // 3 chunks
  EXPECT_EQ(prefill_time(*model, spec, 512, 9999), Duration(10'000'000));
}

// Reference: swapping a 32k context to host at 50 GB/s takes ~86 ms for the 8B and ~27 ms per
// GPU for the 70B at TP=8 (each GPU moves its 1/8 shard in parallel).
TEST_F(CostModelFactoryTest, KvSwapOf32kContextMatchesNumbers) {
  EXPECT_NEAR(to_ms(kv_swap_time(small, node.hardware, 32768)), 86.0, 1.0);
  EXPECT_NEAR(to_ms(kv_swap_time(large, node.hardware, 32768)), 27.0, 0.5);
  EXPECT_EQ(kv_swap_time(small, node.hardware, 0), Duration::zero());
  HardwareSpec no_pcie = node.hardware;
  no_pcie.pcie_bytes_per_s = 0;
  EXPECT_THROW(kv_swap_time(small, no_pcie, 100), std::invalid_argument);
}

TEST(CheckBatchShapeTest, RejectsBrokenBatches) {
  EXPECT_THROW(check_batch_shape(BatchShape{}), std::logic_error);
  EXPECT_THROW(check_batch_shape(BatchShape{0, 0, 0, -1, 0}), std::logic_error);
  EXPECT_THROW(check_batch_shape(BatchShape{100, 0, 0, 0, 0}), std::logic_error);
  EXPECT_THROW(check_batch_shape(BatchShape{0, 1, 0, 4, 100}), std::logic_error);
  EXPECT_THROW(check_batch_shape(BatchShape{2, 3, 0, 0, 0}), std::logic_error);
  EXPECT_NO_THROW(check_batch_shape(BatchShape{100, 2, 50, 4, 400}));
  EXPECT_NO_THROW(check_batch_shape(BatchShape{0, 0, 0, 1, 0}));
}

#if defined(GANGWAY_CHECK_INVARIANTS)
TEST_F(CostModelFactoryTest, CheckedBuildsRejectAnEmptyBatchInIterationTime) {
  const auto model = make_cost_model(small, node.hardware);
  EXPECT_THROW(model->iteration_time(BatchShape{}), std::logic_error);
}
#endif

}  // namespace
}  // namespace gangway
