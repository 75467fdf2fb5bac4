#include "cli/run_warnings.h"

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "model/cost_model.h"
#include "sched/policies/decode_pace_reservation.h"
#include "sched/policies/tier_demand.h"
#include "sched/policy_registry.h"

namespace gangway {

void warn_about_models_without_traffic(const Scenario& scenario, const RunMetrics& metrics,
                                       std::ostream& err) {
  if (!scenario.trace) return;
  for (const ModelSpec& model : scenario.node.models) {
    if (metrics.model(model.id).arrived() > 0) continue;
    err << fmt::format(
        "gangway: warning: model '{}' received no requests from the trace {} (its mapping sends "
        "it no rows); add a rule for it to trace_mapping (or workload.trace.mapping), e.g. "
        "{{model: {}, share: 0.1}} before the catch-all rule (docs/scenario.md, trace mapping "
        "rules)\n",
        model.name, scenario.trace->path, model.name);
  }
}

void warn_if_pace_reserve_cannot_pace_one(const NodeSpec& node, const PolicySpec& policy,
                                          std::ostream& err) {
  // Only gangway's lease mode reads pace_reserve.
  if (!policy.pace_reserve || gangway_mode(policy) != ExecutionMode::kLease) return;
  const ModelSpec* large = node.large_model();
  if (large == nullptr) return;
  const SloClass* tightest = nullptr;
  for (const SloClass& slo : node.slo_classes) {
    if (slo.tpot_target && (!tightest || *slo.tpot_target < *tightest->tpot_target))
      tightest = &slo;
  }
  if (tightest == nullptr) return;
  const bool demand_split = policy.split == TierSplit::kDemand;
  const double guaranteed = guaranteed_large_share(share_limits(policy), demand_split, 1.0);
  const double need =
      lone_pace_need(*make_cost_model(*large, node.hardware), *tightest->tpot_target);
  if (guaranteed >= need) return;
  // A target shorter than a lone decode step fits no share; otherwise the guarantee can grow.
  std::string remedy;
  const double step_ms = to_ms(*tightest->tpot_target) * need;
  if (need >= 1.0 && guaranteed <= 0) {
    remedy = fmt::format("policy.large_share_min above 0 and tpot_ms of class '{}' above {:.1f}",
                         tightest->name, step_ms);
  } else if (need >= 1.0) {
    remedy = fmt::format("tpot_ms of class '{}' to at least {:.1f}", tightest->name,
                         step_ms / guaranteed);
  } else if (demand_split) {
    remedy = fmt::format("policy.large_share_min to at least {:.2f}", need);
  } else {
    remedy = fmt::format("policy.large_weight to at least {:.2f} (with small_weight {:g})",
                         need * policy.small_weight / (1.0 - need), policy.small_weight);
  }
  err << fmt::format(
      "gangway: warning: policy.pace_reserve: pacing one {} sequence at the TPOT target of "
      "class '{}' ({:g} ms) takes {:.0f} % of the node's time, more than the large model's "
      "guaranteed share ({:.0f} %); while the small models' demand fills the node, every large "
      "arrival of that class is turned away. Raise {} (docs/gang-scheduling.md, \"Decode-pace "
      "reservation\")\n",
      large->name, tightest->name, to_ms(*tightest->tpot_target), 100 * need, 100 * guaranteed,
      remedy);
}

void warn_if_timeline_is_large(const std::string& path, std::ostream& err) {
  std::error_code error;
  const auto bytes = std::filesystem::file_size(path, error);
  if (error || static_cast<double>(bytes) <= kLargeTimelineBytes) return;
  err << fmt::format(
      "gangway: warning: the timeline {} is {:.0f} MB; viewers get slow above about {:.0f} MB. "
      "Write a part of the run with --timeline-window START:END (seconds), e.g. "
      "--timeline-window 30:40\n",
      path, static_cast<double>(bytes) / 1e6, kLargeTimelineBytes / 1e6);
}

}  // namespace gangway
