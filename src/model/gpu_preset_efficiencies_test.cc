// Each measured GPU preset's roofline efficiencies reproduce that GPU's reference iteration
// times: the H100's the published vLLM V1 figure, the H200's the Llama-3-8B decode steps
// measured on one H200 (docs/results/h200-gpu-iteration-times.json, docs/calibration.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>

#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/node_spec.h"
#include "core/time.h"
#include "model/roofline_cost_model.h"

namespace gangway {
namespace {

// The 8B model of the default node with the cost settings a preset gives a model of `tier`.
ModelSpec preset_model(const HardwareSpec& hardware, ModelTier tier) {
  ModelSpec model = default_node_spec().models[tier == ModelTier::kLarge ? 1 : 0];
  model.cost = default_cost_model(tier, hardware.roofline_efficiencies);
  return model;
}

// One decode step as measured: `seqs` sequences of `context_each` tokens each, median ms.
struct MeasuredDecode {
  int32_t seqs;
  int64_t context_each;
  double measured_ms;
};

// The 18 decode shapes of docs/results/h200-gpu-iteration-times.json (medians, rounded).
constexpr MeasuredDecode kH200Decodes[] = {
    {1, 512, 5.64},     {1, 2048, 5.76},     {1, 8192, 6.07},    {8, 512, 6.31},
    {8, 2048, 6.69},    {8, 8192, 8.11},     {32, 512, 7.21},    {32, 2048, 9.51},
    {32, 8192, 18.72},  {64, 512, 8.19},     {64, 2048, 12.73},  {64, 8192, 30.91},
    {128, 512, 11.46},  {128, 2048, 20.51},  {128, 8192, 56.32}, {256, 512, 15.88},
    {256, 2048, 33.61}, {256, 8192, 105.12},
};

BatchShape decode_batch(int32_t seqs, int64_t context_each) {
  BatchShape batch;
  batch.decode_seqs = seqs;
  batch.decode_context_tokens = seqs * context_each;
  return batch;
}

TEST(GpuPresetEfficiencies, H100PresetKeepsTheVllmClassSettings) {
  const RooflineEfficiencies& h100 = h100_sxm_80gb().roofline_efficiencies;
  EXPECT_DOUBLE_EQ(h100.compute_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(h100.bandwidth_efficiency, 0.85);
  EXPECT_DOUBLE_EQ(h100.launch_overhead_s, 0.0002);
  // The reference: ~5.7 ms for an 8B batch-1 decode step on vLLM V1 (5 % tolerance).
  const HardwareSpec hardware = h100_sxm_80gb();
  const RooflineCostModel model(preset_model(hardware, ModelTier::kSmall), hardware);
  EXPECT_NEAR(to_ms(model.iteration_time(decode_batch(1, 512))), 5.7, 0.05 * 5.7);
}

TEST(GpuPresetEfficiencies, H200PresetCarriesTheMeasuredFit) {
  const RooflineEfficiencies& h200 = h200_sxm_141gb().roofline_efficiencies;
  EXPECT_DOUBLE_EQ(h200.compute_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(h200.bandwidth_efficiency, 0.57);
  EXPECT_DOUBLE_EQ(h200.launch_overhead_s, 0.0011);
}

// With the H100's settings the H200 decode steps measure 1.30-1.84x the prediction (geomean
// 1.51); with the H200 preset's, 0.80-1.20 (geomean 0.94).
TEST(GpuPresetEfficiencies, H200PresetPredictsTheMeasuredDecodeSteps) {
  const HardwareSpec hardware = h200_sxm_141gb();
  const RooflineCostModel model(preset_model(hardware, ModelTier::kSmall), hardware);
  double log_sum = 0;
  for (const MeasuredDecode& step : kH200Decodes) {
    const double predicted =
        to_ms(model.iteration_time(decode_batch(step.seqs, step.context_each)));
    const double ratio = step.measured_ms / predicted;
    EXPECT_GT(ratio, 0.75) << step.seqs << " x " << step.context_each;
    EXPECT_LT(ratio, 1.25) << step.seqs << " x " << step.context_each;
    log_sum += std::log(ratio);
  }
  const double geomean = std::exp(log_sum / static_cast<double>(std::size(kH200Decodes)));
  EXPECT_GT(geomean, 0.9);
  EXPECT_LT(geomean, 1.1);
}

// A preset's compute efficiency is a one-GPU figure; the large model keeps its TP=8 MFU on every
// preset, and takes the preset's bandwidth efficiency and per-iteration overhead.
TEST(GpuPresetEfficiencies, LargeModelKeepsItsComputeEfficiencyOnEveryPreset) {
  const RooflineEfficiencies measured{
      .compute_efficiency = 0.6, .bandwidth_efficiency = 0.57, .launch_overhead_s = 0.0011};
  const CostModelSpec large = default_cost_model(ModelTier::kLarge, measured);
  EXPECT_EQ(large.kind, CostModelKind::kRoofline);
  EXPECT_DOUBLE_EQ(large.compute_efficiency, kLargeModelComputeEfficiency);
  EXPECT_DOUBLE_EQ(large.bandwidth_efficiency, 0.57);
  EXPECT_DOUBLE_EQ(large.launch_overhead_s, 0.0011);
  const CostModelSpec small = default_cost_model(ModelTier::kSmall, measured);
  EXPECT_DOUBLE_EQ(small.compute_efficiency, 0.6);
  EXPECT_DOUBLE_EQ(small.bandwidth_efficiency, 0.57);
  EXPECT_DOUBLE_EQ(small.launch_overhead_s, 0.0011);
}

}  // namespace
}  // namespace gangway
