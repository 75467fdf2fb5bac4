// A scenario: everything one simulation (or one server) needs, read from a YAML file. The node
// and its models, the SLO classes, the scheduler's options and gang policy, the seed and
// duration, and the workload: synthetic streams or a trace to replay. docs/scenario.md
// documents every key; unknown keys are errors so that a typo never passes silently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/scenario_setting.h"
#include "config/server_config.h"
#include "core/node_spec.h"
#include "core/time.h"
#include "sched/policy_spec.h"
#include "sched/scheduler.h"
#include "sim/cluster_spec.h"
#include "sim/fault_spec.h"
#include "workload/trace/trace_spec.h"
#include "workload/workload_spec.h"

namespace gangway {

// The gang policy of a scenario that names none (and of `gangway serve` without a file):
// gangway's own arbiter in lease mode. It is the policy docs/gang-scheduling.md recommends: it
// leads or ties every baseline on goodput at nearly every measured mix, and the baselines each
// starve one tier somewhere (fcfs blocks the small models behind every gang barrier; sm-first
// meets no large-model SLO under mixed load).
PolicySpec default_policy_spec();

struct Scenario {
  std::string name;  // `name:` or the file's stem
  std::string path;  // the file it was read from
  uint64_t seed = 1;
  Duration duration = std::chrono::seconds(60);
  Duration drain_limit = std::chrono::seconds(600);
  // Requests arriving before this are simulated but not measured (steady state only).
  Duration warmup{0};
  NodeSpec node;
  SchedulerOptions scheduler;
  PolicySpec policy = default_policy_spec();
  // Tenant names, indexed by TenantId value (tenant 0 is "default").
  std::vector<std::string> tenants;
  // The workload: synthetic streams, or (if set) a trace replay.
  std::vector<StreamSpec> streams;
  std::optional<TraceSpec> trace;
  // How rows of a trace given on the command line (--trace) map to models and classes.
  std::vector<TraceMappingRule> trace_mapping;
  // Faults the simulator injects (sim/fault_spec.h); the server ignores them.
  std::vector<FaultSpec> faults;
  // Several nodes behind a router model (sim/cluster_spec.h); the simulator only.
  std::optional<ClusterSpec> cluster;
  // `gangway serve`'s own settings (server_config.h); the simulator ignores them.
  ServerConfig server;
};

// Reads and validates a scenario file. Throws InputError ("FILE:LINE: KEY: expected ...") for
// anything malformed, unknown, out of range or inconsistent (a model with no replica, weights
// that do not fit in HBM, a stream naming an unknown model or class, ...). `settings` (`--set`)
// change the file's tree before it is read, and are checked like the file.
Scenario load_scenario(const std::string& path, const std::vector<ScenarioSetting>& settings = {});
// The same from YAML text; `path` is only used in messages and to resolve relative trace paths.
Scenario parse_scenario(const std::string& yaml_text, const std::string& path,
                        const std::vector<ScenarioSetting>& settings = {});

}  // namespace gangway
