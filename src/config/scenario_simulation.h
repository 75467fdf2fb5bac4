// The scenario's measurement window and faults as a simulator takes them: what `gangway simulate`
// passes, so that every driver and test that simulates a scenario runs the same window.
#pragma once

#include "config/scenario.h"
#include "sim/simulator.h"

namespace gangway {

// Its duration, drain limit, warm-up and faults; no timeline, time series, cancellations or
// observer.
SimulationOptions simulation_options_of(const Scenario& scenario);

}  // namespace gangway
