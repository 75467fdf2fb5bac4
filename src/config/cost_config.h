// Reads a model's `cost:` mapping: which iteration-time model (roofline, linear or constant) and
// its parameters, in the units the key names carry (ms, us, ns). Only the keys that the chosen
// model reads are allowed, so a parameter meant for another model is an error, not ignored.
#pragma once

#include "config/yaml_reader.h"
#include "core/model_spec.h"

namespace gangway {

// `value` is the `cost:` mapping; keys left out keep `defaults`' values (the tier's defaults).
CostModelSpec read_cost_model(const YamlValue& value, const CostModelSpec& defaults);

}  // namespace gangway
