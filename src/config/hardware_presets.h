// The GPU presets a scenario names in `node.hardware`: datasheet figures of the GPUs an 8-GPU
// inference node is built from, each with its source beside it (hardware_presets.cc), so that
// a reader can check a figure or override it (`node.hardware: {preset: ..., hbm_tb_per_s: ...}`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/hardware_spec.h"

namespace gangway {

std::optional<HardwareSpec> find_hardware_preset(const std::string& name);
std::vector<std::string> hardware_preset_names();

}  // namespace gangway
