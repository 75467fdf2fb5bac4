#include "cli/simulation_cluster.h"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "cli/text_table.h"
#include "config/scenario_source.h"
#include "sched/policy_registry.h"

namespace gangway {

namespace {

nlohmann::json decisions_json(const AdmissionCounters& counters) {
  nlohmann::json decisions = nlohmann::json::object();
  for (int r = 0; r < kReasonCount; ++r) {
    if (counters.decisions[r] > 0) {
      decisions[r == 0 ? "admitted" : to_string(static_cast<Reason>(r))] = counters.decisions[r];
    }
  }
  return decisions;
}

double busy_fraction(const NodeTimeAccount& node) {
  const double gpu_seconds = to_seconds(node.elapsed()) * node.gpu_count();
  if (gpu_seconds <= 0) return 0.0;
  return (node.total_seconds(GpuActivity::kRunningSmall) +
          node.total_seconds(GpuActivity::kRunningLarge)) /
         gpu_seconds;
}

}  // namespace

PolicyRun run_cluster_policy(const Scenario& scenario, const PolicySpec& policy,
                             const std::string& routing, Duration series_bin) {
  std::unique_ptr<RequestSource> source = make_request_source(scenario);
  const SchedulerOptions scheduler = run_scheduler_options(scenario, routing);
  const std::string mode = to_string(make_policy(policy)->mode());
  ClusterSimulator simulator(
      scenario.node, scheduler, [&policy] { return make_policy(policy); }, *scenario.cluster,
      scenario.seed, *source, simulation_options(scenario, nullptr, series_bin));
  const auto wall_start = std::chrono::steady_clock::now();
  ClusterResult result = simulator.run();
  const auto wall_end = std::chrono::steady_clock::now();
  ClusterRunReport cluster{*scenario.cluster, std::move(result.nodes), {}, {}, result.spillover};
  for (size_t i = 0; i < simulator.node_count(); ++i) {
    cluster.admission.push_back(simulator.scheduler(i).admission().counters());
    cluster.final_level.push_back(to_string(simulator.scheduler(i).admission().ladder().level()));
  }
  PolicyRun run{policy,
                mode,
                routing,
                std::move(result.total),
                {},
                std::chrono::duration<double>(wall_end - wall_start).count(),
                {},
                false,
                {},
                false,
                {},
                OverloadLadder(),
                std::move(cluster)};
  run.oracle_output_lengths = scheduler.oracle_predictor;
  read_scheduler_report(simulator.scheduler(0), run);
  return run;
}

nlohmann::json cluster_json(const PolicyRun& run) {
  const ClusterRunReport& cluster = *run.cluster;
  const double window_s = run.result.measured_s;
  const SpilloverCounters& spill = cluster.spillover;
  nlohmann::json reasons = nlohmann::json::object();
  for (int r = 0; r < kReasonCount; ++r) {
    if (spill.retried_by_reason[r] > 0) {
      reasons[to_string(static_cast<Reason>(r))] = spill.retried_by_reason[r];
    }
  }
  const auto arrived = static_cast<double>(run.result.metrics.total().arrived());
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    const ClusterNodeResult& node = cluster.nodes[i];
    nodes.push_back({{"index", i},
                     {"first_choice", node.first_choice},
                     {"retries_received", node.retries_received},
                     {"gang_phases", node.gang_phases},
                     {"node", node.node_time.to_json()},
                     {"admission",
                      {{"decisions", decisions_json(cluster.admission[i])},
                       {"final_level", cluster.final_level[i]}}},
                     {"classes", node.metrics.classes_json(window_s)},
                     {"models", node.metrics.models_json(window_s)},
                     {"total", node.metrics.total_json(window_s)}});
  }
  return {{"nodes", cluster.spec.nodes},
          {"router", to_string(cluster.spec.router)},
          {"spillover_enabled", cluster.spec.spillover},
          {"pinned_share", cluster.spec.pinned_share},
          {"report_interval_ms", to_ms(cluster.spec.report_interval)},
          {"retries", cluster.spec.retries},
          {"pinned_tenant", cluster.spec.pinned_tenant
                                ? nlohmann::json(cluster.spec.pinned_tenant->value())
                                : nlohmann::json()},
          {"agent_interval_ms", to_ms(cluster.spec.agent_interval)},
          {"spillover",
           {{"retried", spill.retried},
            {"admitted_elsewhere", spill.admitted_elsewhere},
            {"rejected_again", spill.rejected_again},
            {"not_retried", spill.not_retried},
            {"retried_fraction", arrived > 0 ? static_cast<double>(spill.retried) / arrived : 0.0},
            {"reasons", reasons}}},
          {"per_node", nodes}};
}

void print_cluster_table(std::ostream& out, const std::vector<PolicyRun>& runs) {
  for (const PolicyRun& run : runs) {
    if (!run.cluster) continue;
    const ClusterRunReport& cluster = *run.cluster;
    const SpilloverCounters& spill = cluster.spillover;
    out << fmt::format("\n{}: cluster of {} nodes, router {}, spillover {}\n", run.policy.name,
                       cluster.spec.nodes, to_string(cluster.spec.router),
                       cluster.spec.spillover ? "on" : "off");
    print_wrapped(out, "spillover",
                  {fmt::format("{} retried elsewhere ({} admitted there, {} rejected again)",
                               spill.retried, spill.admitted_elsewhere, spill.rejected_again),
                   fmt::format("{} rejected and not retried", spill.not_retried)},
                  2);
    TextTable table({"node", "first", "retries", "arrived", "done", "rejected", "SLO", "goodput/s",
                     "GPU util", "ladder at end"},
                    2);
    for (size_t i = 0; i < cluster.nodes.size(); ++i) {
      const ClusterNodeResult& node = cluster.nodes[i];
      const RequestStats& total = node.metrics.total();
      const std::string slo =
          total.arrived() > 0
              ? percent_or_dash(static_cast<double>(total.slo_met()) / total.arrived())
              : "-";
      table.add_row(
          {std::to_string(i), std::to_string(node.first_choice),
           std::to_string(node.retries_received), std::to_string(total.arrived()),
           std::to_string(total.completed()), std::to_string(total.rejected()), slo,
           fmt::format("{:.1f}", static_cast<double>(total.slo_met()) / run.result.measured_s),
           percent_or_dash(busy_fraction(node.node_time)), cluster.final_level[i]});
    }
    table.print(out);
    out << "  (first: arrivals the router sent there first; per node: every request sent there, a\n"
           "  retried one at both nodes; the rows above count each request once)\n";
  }
}

}  // namespace gangway
