// Reads a scenario's `node:` section: how many GPUs, which GPU (a hardware preset, optionally
// with single figures overridden), host memory for swapped KV, the per-GPU activation reserve and
// the KV block size. Models and SLO classes have their own sections (model_config, slo_config).
#pragma once

#include "config/yaml_reader.h"
#include "core/hardware_spec.h"
#include "core/node_spec.h"

namespace gangway {

// Fills node.gpu_count, hardware, host_memory_bytes, activation_reserve_bytes and
// kv_block_tokens from `value` (the `node:` mapping); keys left out keep the defaults, except the
// hardware, which defaults to the h100-sxm-80gb preset.
void read_node_section(const YamlValue& value, NodeSpec& node);

// `hardware:` as a preset name ("h100-sxm-80gb", "h200-sxm-141gb") or a mapping {preset, and
// figures overriding the preset's}.
HardwareSpec read_hardware(const YamlValue& value);

}  // namespace gangway
