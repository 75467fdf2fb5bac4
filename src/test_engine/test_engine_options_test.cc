// gangway engine's model takes the roofline settings of the GPU preset it runs on when no
// scenario gives them.
#include "test_engine/test_engine_options.h"

#include <gtest/gtest.h>

namespace gangway {
namespace {

TestEngineSetup engine_on(const std::string& hardware) {
  TestEngineOptions options;
  options.model = "llama-3-8b";
  options.hardware = hardware;
  options.hardware_given = true;
  return resolve_test_engine_setup(options);
}

TEST(TestEngineOptions, TheModelTakesTheGpuPresetsRooflineSettings) {
  const TestEngineSetup h200 = engine_on("h200-sxm-141gb");
  EXPECT_EQ(h200.hardware.name, "h200-sxm-141gb");
  EXPECT_DOUBLE_EQ(h200.model.cost.compute_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(h200.model.cost.bandwidth_efficiency, 0.57);
  EXPECT_DOUBLE_EQ(h200.model.cost.launch_overhead_s, 0.0011);

  const TestEngineSetup h100 = engine_on("h100-sxm-80gb");
  EXPECT_DOUBLE_EQ(h100.model.cost.compute_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(h100.model.cost.bandwidth_efficiency, 0.85);
  EXPECT_DOUBLE_EQ(h100.model.cost.launch_overhead_s, 0.0002);
}

TEST(TestEngineOptions, TheStartupLineShowsTheResolvedCostSettings) {
  EXPECT_EQ(cost_settings_text(engine_on("h200-sxm-141gb").model.cost),
            "roofline cost: compute_efficiency 0.5, bandwidth_efficiency 0.57, "
            "launch_overhead_ms 1.1");
  CostModelSpec constant;
  constant.kind = CostModelKind::kConstant;
  constant.constant_iteration_s = 0.012;
  EXPECT_EQ(cost_settings_text(constant), "constant cost: iteration_ms 12");
}

}  // namespace
}  // namespace gangway
