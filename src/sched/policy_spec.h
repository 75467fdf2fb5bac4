// The parameters of a gang policy, as read from a scenario's `policy:` section. One flat struct
// for every policy keeps the YAML mapping and its validation in one place; each policy reads the
// fields it documents and the registry rejects values that make no sense for it.
#pragma once

#include <string>

#include "core/time.h"

namespace gangway {

struct PolicySpec {
  std::string name = "fcfs";

  // time-slice: a fixed cycle of `slice_period`, the first `slice_large_share` of which belongs
  // to the large model; no feedback from queues.
  Duration slice_period = std::chrono::milliseconds(200);
  double slice_large_share = 0.5;
};

}  // namespace gangway
