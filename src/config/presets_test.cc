// Every GPU and model preset loads into a node, the figures are the datasheets' and model cards',
// and the checks that follow from them hold (a 405B does not fit 8 x H100 80 GB in bf16).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/hardware_presets.h"
#include "config/model_presets.h"
#include "config/scenario.h"
#include "core/input_error.h"

namespace gangway {
namespace {

using ::testing::HasSubstr;

std::string node_with(const std::string& hardware, const std::string& small,
                      const std::string& large) {
  return "node: {gpus: 8, hardware: " + hardware +
         "}\nmodels:\n  - {name: s, tier: small, shape: " + small +
         "}\n  - {name: l, tier: large, shape: " + large +
         "}\nworkload:\n  streams: [{name: c, model: s, arrival: {rate_per_s: 1}}]\n";
}

TEST(Presets, EveryGpuPresetLoadsWithPositiveFigures) {
  for (const std::string& name : hardware_preset_names()) {
    SCOPED_TRACE(name);
    const Scenario scenario =
        parse_scenario(node_with(name, "llama-3-8b", "llama-3-70b"), "presets.yaml");
    const HardwareSpec& spec = scenario.node.hardware;
    EXPECT_EQ(spec.name, name);
    EXPECT_GE(spec.hbm_bytes, 80e9);
    EXPECT_GT(spec.hbm_bytes_per_s, 1e12);
    EXPECT_GT(spec.bf16_flops_per_s, 300e12);
    EXPECT_GT(spec.nvlink_bytes_per_s, 0);
    EXPECT_GT(spec.allreduce_bytes_per_s, 0);
    EXPECT_GT(spec.pcie_bytes_per_s, 0);
  }
  EXPECT_EQ(hardware_preset_names().size(), 5u);
  EXPECT_DOUBLE_EQ(find_hardware_preset("mi300x-192gb")->hbm_bytes_per_s, 5.3e12);
  EXPECT_DOUBLE_EQ(find_hardware_preset("b200-sxm-180gb")->bf16_flops_per_s, 2250e12);
  EXPECT_DOUBLE_EQ(find_hardware_preset("a100-sxm-80gb")->bf16_flops_per_s, 312e12);
}

TEST(Presets, EveryModelPresetLoadsAsSmallOrLarge) {
  for (const std::string& name : shape_preset_names()) {
    SCOPED_TRACE(name);
    const std::optional<ModelShape> shape = find_shape_preset(name);
    ASSERT_TRUE(shape);
    EXPECT_EQ(shape->name, name);
    EXPECT_EQ(shape->q_heads % shape->kv_heads, 0);
    EXPECT_EQ(shape->hidden, shape->q_heads * shape->head_dim);
    const bool fits_one_h200 = shape->weight_bytes() < 100e9;
    const std::string yaml = fits_one_h200 ? node_with("h200-sxm-141gb", name, "llama-3-70b")
                                           : node_with("h200-sxm-141gb", "llama-3-8b", name);
    const Scenario scenario = parse_scenario(yaml, "presets.yaml");
    EXPECT_EQ(scenario.node.models[fits_one_h200 ? 0 : 1].shape.name, name);
  }
}

TEST(Presets, MixtralIsAMixtureOfExperts) {
  const ModelShape mixtral = *find_shape_preset("mixtral-8x7b");
  EXPECT_TRUE(mixtral.is_moe());
  EXPECT_EQ(mixtral.experts, 8);
  EXPECT_EQ(mixtral.experts_per_token, 2);
  EXPECT_DOUBLE_EQ(mixtral.parameters_per_token(), 12.9e9);
  EXPECT_FALSE(find_shape_preset("qwen2.5-72b")->is_moe());
}

TEST(Presets, A405bFitsEightH200sButNotEightH100s) {
  EXPECT_NO_THROW(
      parse_scenario(node_with("h200-sxm-141gb", "llama-3-8b", "llama-3.1-405b"), "p.yaml"));
  try {
    parse_scenario(node_with("h100-sxm-80gb", "llama-3-8b", "llama-3.1-405b"), "p.yaml");
    ADD_FAILURE() << "expected the 405B not to fit";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("p.yaml"));
  }
}

TEST(Presets, MoeFiguresAreCheckedInAShapeMapping) {
  const auto error_of = [](const std::string& shape) {
    try {
      parse_scenario(node_with("h200-sxm-141gb", shape, "llama-3-70b"), "moe.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of("{preset: mixtral-8x7b, experts_per_token: 1}"), "");
  EXPECT_THAT(error_of("{preset: mixtral-8x7b, experts_per_token: 8}"),
              HasSubstr("1 <= experts_per_token < experts"));
  EXPECT_THAT(error_of("{preset: llama-3-8b, active_parameters_b: 2}"),
              HasSubstr("expected experts"));
  EXPECT_THAT(error_of("{preset: mixtral-8x7b, active_parameters_b: 5}"),
              HasSubstr("active_parameters_b from"));
}

}  // namespace
}  // namespace gangway
