// Runs one scenario under one gang policy in the simulator and keeps what the reports need.
// This is where the wall clock is read (a driver's right): the simulation itself never does.
#pragma once

#include <optional>
#include <string>

#include "config/scenario.h"
#include "metrics/timeline_writer.h"
#include "sim/simulator.h"
#include "sim/workload/request_source.h"

namespace gangway {

struct PolicyRun {
  PolicySpec policy;
  std::string mode;  // "lease" or "exclusive"
  SimulationResult result;
  double wall_s = 0;
};

// Simulates `scenario` under `policy`; writes the GPU timeline to `timeline` if given.
PolicyRun run_policy(const Scenario& scenario, const PolicySpec& policy, TimelineWriter* timeline);

}  // namespace gangway
