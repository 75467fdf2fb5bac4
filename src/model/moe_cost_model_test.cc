// The roofline cost of a mixture of experts (docs/decisions/moe-cost-on-active-parameters.md):
// compute on the active parameters, weights read for the experts the batch touches.
#include <gtest/gtest.h>

#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "model/roofline_cost_model.h"

namespace gangway {
namespace {

// Mixtral 8x7B's figures: 46.7 B parameters, 12.9 B active, 8 experts, 2 per token.
ModelSpec mixtral() {
  ModelSpec model;
  model.name = "mixtral";
  model.shape.layers = 32;
  model.shape.hidden = 4096;
  model.shape.q_heads = 32;
  model.shape.kv_heads = 8;
  model.shape.head_dim = 128;
  model.shape.ffn = 14336;
  model.shape.parameters = 46.7e9;
  model.shape.experts = 8;
  model.shape.experts_per_token = 2;
  model.shape.active_parameters = 12.9e9;
  model.tensor_parallel = 2;
  return model;
}

ModelSpec dense_of(double parameters) {
  ModelSpec model = mixtral();
  model.shape.experts = 0;
  model.shape.experts_per_token = 0;
  model.shape.active_parameters = 0;
  model.shape.parameters = parameters;
  return model;
}

BatchShape decoding(int32_t seqs) {
  BatchShape batch;
  batch.decode_seqs = seqs;
  batch.decode_context_tokens = seqs;  // a tiny context: weights dominate memory
  return batch;
}

BatchShape prefill(int32_t tokens) {
  BatchShape batch;
  batch.prefill_tokens = tokens;
  batch.prefill_seqs = 1;
  return batch;
}

TEST(MoeCost, ExpertAndSharedPartsFollowFromTheThreeFigures) {
  const ModelShape shape = mixtral().shape;
  EXPECT_NEAR(shape.expert_parameters(), (46.7e9 - 12.9e9) / 6, 1e3);
  EXPECT_NEAR(shape.shared_parameters() + 2 * shape.expert_parameters(), 12.9e9, 1e3);
  EXPECT_DOUBLE_EQ(shape.parameters_per_token(), 12.9e9);
  EXPECT_DOUBLE_EQ(shape.weight_bytes(), 2 * 46.7e9);  // memory holds every expert
}

TEST(MoeCost, OneDecodeReadsAboutTheActiveWeightsAndABigBatchReadsThemAll) {
  const HardwareSpec hardware = h100_sxm_80gb();
  const RooflineCostModel moe(mixtral(), hardware);
  const RooflineCostModel active_sized(dense_of(12.9e9), hardware);
  const RooflineCostModel total_sized(dense_of(46.7e9), hardware);
  // One token touches its 2 of 8 experts per layer: about the active weights (the shared part
  // plus two experts), far from all of them.
  const double one = moe.breakdown(decoding(1)).memory_s;
  EXPECT_NEAR(one, active_sized.breakdown(decoding(1)).memory_s, 0.02 * one);
  // 64 tokens touch nearly every expert: the memory time of the whole model.
  const double many = moe.breakdown(decoding(64)).memory_s;
  EXPECT_NEAR(many, total_sized.breakdown(decoding(64)).memory_s, 0.01 * many);
  // In between it grows with the batch.
  EXPECT_LT(moe.breakdown(decoding(2)).memory_s, moe.breakdown(decoding(4)).memory_s);
}

TEST(MoeCost, ComputeCountsTheActiveParameters) {
  const HardwareSpec hardware = h100_sxm_80gb();
  const RooflineCostModel moe(mixtral(), hardware);
  const RooflineCostModel active_sized(dense_of(12.9e9), hardware);
  EXPECT_DOUBLE_EQ(moe.breakdown(prefill(2048)).compute_s,
                   active_sized.breakdown(prefill(2048)).compute_s);
}

TEST(MoeCost, ImpossibleFiguresAreRejected) {
  ModelSpec too_many = mixtral();
  too_many.shape.experts_per_token = 8;
  EXPECT_THROW(RooflineCostModel::validate(too_many, h100_sxm_80gb()), std::invalid_argument);
  ModelSpec too_active = mixtral();
  too_active.shape.active_parameters = 50e9;
  EXPECT_THROW(RooflineCostModel::validate(too_active, h100_sxm_80gb()), std::invalid_argument);
  ModelSpec too_few_active = mixtral();
  too_few_active.shape.active_parameters = 5e9;  // less than a quarter of the whole
  EXPECT_THROW(RooflineCostModel::validate(too_few_active, h100_sxm_80gb()), std::invalid_argument);
}

}  // namespace
}  // namespace gangway
