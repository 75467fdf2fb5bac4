#include "config/request_level_setup.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "sched/policy_registry.h"

namespace gangway {

std::vector<EngineDescriptor> engine_descriptors(const NodeSpec& node,
                                                 const EnginesConfig& engines) {
  std::vector<EngineDescriptor> descriptors;
  for (const ModelEngines& model : engines.models) {
    const ModelSpec& spec = node.model(model.model);
    for (const EngineEndpoint& endpoint : model.endpoints) {
      EngineDescriptor descriptor;
      descriptor.model = model.model;
      descriptor.large = spec.is_large();
      descriptor.gpus = endpoint.gpus;
      descriptor.kv_capacity_tokens = endpoint.kv_capacity_tokens;
      descriptor.max_num_seqs = endpoint.max_num_seqs;
      descriptor.pausable = can_pause(model.kind);
      descriptors.push_back(std::move(descriptor));
    }
  }
  return descriptors;
}

bool runs_exclusive(const PolicySpec& policy) {
  const std::optional<ExecutionMode> mode = gangway_mode(policy);
  return mode.value_or(policy.mode) == ExecutionMode::kExclusive;
}

RequestLevelOptions request_level_options(const EnginesConfig& engines,
                                          const SchedulerOptions& scheduler,
                                          const PolicySpec& policy) {
  const bool all_pause = std::all_of(engines.models.begin(), engines.models.end(),
                                     [](const ModelEngines& m) { return can_pause(m.kind); });
  RequestLevelOptions options;
  options.lease = all_pause && !runs_exclusive(policy);
  if (options.lease) {
    options.tiers.large_hold = policy.lease_max;
    options.tiers.max_large_wait = policy.max_large_wait;
  } else {
    options.tiers.large_hold = policy.exclusive_phase_max;
    options.tiers.max_large_wait = policy.exclusive_max_large_wait;
  }
  // While both tiers have work the policy's weights split the time.
  const double small_per_large =
      policy.large_weight > 0 ? policy.small_weight / policy.large_weight : 1.0;
  options.tiers.small_hold = Duration(
      static_cast<int64_t>(std::llround(options.tiers.large_hold.count() * small_per_large)));
  const AdmissionOptions& admission = scheduler.admission;
  options.queue_order = admission.queue_order;
  options.no_target_deadline = admission.no_target_deadline;
  options.queue_cap = admission.queue_cap;
  return options;
}

}  // namespace gangway
