// Finds a file that a scenario names (a trace to replay, a trace to draw lengths from). A
// relative path is looked up first beside the scenario file, so that a scenario and its data can
// move together, then in the current directory.
#pragma once

#include <string>

#include "config/yaml_reader.h"

namespace gangway {

// The path to open for `value` (a path text); fails at `value` if no such file exists.
std::string resolve_input_path(const YamlValue& value, const std::string& scenario_path);

}  // namespace gangway
