// Test support for `gangway simulate` tests: run the command in process and keep what it printed,
// and compare JSON documents without the fields that measure wall-clock time. Included by tests
// only.
#pragma once

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/simulate_command.h"

namespace gangway {

struct CommandRun {
  int status;
  std::string out;
  std::string err;
};

inline CommandRun simulate(const SimulateOptions& options) {
  std::ostringstream out;
  std::ostringstream err;
  const int status = run_simulate(options, out, err);
  return CommandRun{status, out.str(), err.str()};
}

// Everything but the wall-clock fields, which differ between runs of the same seed.
inline nlohmann::json without_wall_clock(nlohmann::json document) {
  for (auto& run : document["runs"]) {
    run["sim"].erase("wall_s");
    run["sim"].erase("speedup");
  }
  return document;
}

}  // namespace gangway
