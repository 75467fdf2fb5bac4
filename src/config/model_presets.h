// The model shapes a scenario names in `models[].shape` (or by the model's own name): the
// dimensions of public checkpoints from their config.json files, each with its source beside
// it (model_presets.cc). A shape decides a model's cost and its KV footprint per token.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/model_spec.h"

namespace gangway {

std::optional<ModelShape> find_shape_preset(const std::string& name);
std::vector<std::string> shape_preset_names();

}  // namespace gangway
