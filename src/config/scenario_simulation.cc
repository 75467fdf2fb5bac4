#include "config/scenario_simulation.h"

namespace gangway {

SimulationOptions simulation_options_of(const Scenario& scenario) {
  SimulationOptions options;
  options.duration = scenario.duration;
  options.drain_limit = scenario.drain_limit;
  options.warmup = scenario.warmup;
  options.faults = scenario.faults;
  return options;
}

}  // namespace gangway
