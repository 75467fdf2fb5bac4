#include "cli/bound_report.h"

#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "config/scenario_source.h"

namespace gangway {

namespace {

double bound_run_goodput_rps(const PolicyRun& run) {
  const double window_s = run.result.measured_s;
  return window_s > 0 ? static_cast<double>(run.result.metrics.total().slo_met()) / window_s : 0.0;
}

}  // namespace

FluidBound scenario_fluid_bound(const Scenario& scenario) {
  const std::unique_ptr<RequestSource> source = make_request_source(scenario);
  return compute_fluid_bound(scenario.node, *source, Time() + scenario.warmup,
                             Time() + scenario.duration);
}

nlohmann::json fluid_bound_json(const Scenario& scenario, const FluidBound& bound,
                                const std::vector<PolicyRun>& runs) {
  nlohmann::json models = nlohmann::json::object();
  for (const ModelSpec& model : scenario.node.models) {
    const size_t id = model.id.value();
    models[model.name] = {{"offered_rps", bound.model_offered_rps[id]},
                          {"goodput_rps", bound.model_goodput_rps[id]}};
  }
  nlohmann::json classes = nlohmann::json::object();
  for (const SloClass& slo : scenario.node.slo_classes) {
    const size_t id = slo.id.value();
    classes[slo.name] = {{"offered_rps", bound.class_offered_rps[id]},
                         {"goodput_rps", bound.class_goodput_rps[id]}};
  }
  nlohmann::json per_run = nlohmann::json::array();
  for (const PolicyRun& run : runs) {
    const double goodput = bound_run_goodput_rps(run);
    per_run.push_back(
        {{"policy", run.policy.name},
         {"mode", run.mode},
         {"routing", run.routing},
         {"goodput_rps", goodput},
         {"fraction_of_bound", bound.goodput_rps > 0 ? nlohmann::json(goodput / bound.goodput_rps)
                                                     : nlohmann::json(nullptr)}});
  }
  return {{"window_s", bound.window_s},
          {"goodput_rps", bound.goodput_rps},
          {"offered_rps", bound.offered_rps},
          {"feasible_rps", bound.feasible_rps},
          {"large_share", bound.large_share},
          {"large_batch", bound.large_batch},
          {"small_batch", bound.small_batch},
          {"models", models},
          {"classes", classes},
          {"runs", per_run}};
}

void print_fluid_bound(std::ostream& out, const FluidBound& bound,
                       const std::vector<PolicyRun>& runs) {
  out << fmt::format(
      "\nfluid bound: {:.1f} on-time req/s of {:.1f} offered ({:.1f} feasible); LM share {:.1f}%, "
      "batches LM {} / SM {}\n",
      bound.goodput_rps, bound.offered_rps, bound.feasible_rps, 100.0 * bound.large_share,
      bound.large_batch, bound.small_batch);
  for (const PolicyRun& run : runs) {
    const double goodput = bound_run_goodput_rps(run);
    out << fmt::format("  {:<16} {:>9} {:>10.1f} req/s  {:>6.1f}% of the bound\n", run.policy.name,
                       run.mode, goodput,
                       bound.goodput_rps > 0 ? 100.0 * goodput / bound.goodput_rps : 0.0);
  }
}

}  // namespace gangway
