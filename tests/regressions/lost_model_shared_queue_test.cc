// When every GPU a small model is placed on is lost for good, the requests waiting in that
// model's shared (late-binding) queue, which the default router (predicted-ttft) uses, are
// rejected with a retry-elsewhere reason, like the large model's when the gang loses a GPU, just
// as those waiting in the lost replicas' own queues are. Nothing could ever run them. A case of
// tests/sim/random_scenarios_test.cc.

#include <gtest/gtest.h>

#include <chrono>

#include "config/scenario.h"
#include "scenario_runs.h"

namespace gangway {
namespace {

TEST(Regression, LostGpusOfASmallModelRejectItsSharedQueue) {
  for (const bool admission : {false, true}) {
    SCOPED_TRACE(admission ? "admission on" : "admission off");
    Scenario scenario = parse_scenario(kTwoSmallModelsScenario, "two-small-models.yaml");
    scenario.duration = std::chrono::seconds(3);
    scenario.scheduler.admission.enabled = admission;
    // Both GPUs of the model "tiny", at once and for good.
    for (const uint16_t gpu : {0, 1}) {
      FaultSpec loss;
      loss.kind = FaultKind::kGpuLoss;
      loss.gpu = GpuId(gpu);
      loss.at = Time::zero() + std::chrono::seconds(1);
      scenario.faults.push_back(loss);
    }
    const SimulationResult result = simulate_scenario(scenario);
    expect_no_request_stranded(result);
  }
}

}  // namespace
}  // namespace gangway
