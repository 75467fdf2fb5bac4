// The scenario's workload as a request source: its synthetic streams, or its trace replay. Every
// driver (the simulator, the load generator) builds requests through this one function, so that
// a simulation and a load run of the same scenario and seed see the same request sequence.
#pragma once

#include <memory>

#include "config/scenario.h"
#include "workload/request_source.h"

namespace gangway {

std::unique_ptr<RequestSource> make_request_source(const Scenario& scenario);

}  // namespace gangway
