// Checks at load time that the node's memory layout works: every GPU's weights and activation
// reserve leave room for KV (compute_kv_layout, the layout the scheduler itself will build), and
// every model's KV pool holds at least one block. Otherwise the scenario would only fail later,
// when the scheduler is built, without a file and line.
#pragma once

#include "config/yaml_reader.h"
#include "core/node_spec.h"
#include "sched/scheduler.h"

namespace gangway {

// `models` is the `models:` list the node's models were read from (errors point there).
void check_memory_layout(const NodeSpec& node, const SchedulerOptions& options,
                         const YamlValue& models);

}  // namespace gangway
