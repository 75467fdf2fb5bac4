// The engine processes `gangway serve` launches itself: one EngineLaunchSpec per engine whose
// model has a `launch:` template in server.engines (docs/engines.md), run by EngineSupervisor.
// Engines without a template are attached to at their URLs.
#pragma once

#include <string>
#include <vector>

#include "config/engine_config.h"
#include "core/node_spec.h"
#include "engine/engine_launch_spec.h"

namespace gangway {

// The large model's engine first (it takes the most memory of every GPU), then the small
// replicas in order. The command runs through /bin/sh (exec'ed, so the shell's pid is the
// engine's); its output goes to `log_folder`/gangway-engine-PORT.log; healthy when GET /health
// (an OpenAI server: /v1/models) answers 200.
std::vector<EngineLaunchSpec> engine_launch_specs(const EnginesConfig& engines,
                                                  const NodeSpec& node,
                                                  const std::string& log_folder);

}  // namespace gangway
