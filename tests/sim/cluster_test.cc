// Several nodes behind a router model (sim/cluster_simulator.h), with invariants checked after
// every event: the same seed gives the same run; every request ends with exactly one outcome
// across the nodes; a node overloaded by skewed routing spills its rejections to the others;
// one node behind the router is the single-node simulator.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "config/scenario.h"
#include "config/scenario_source.h"
#include "scenario_runs.h"
#include "sched/policy_registry.h"
#include "sim/cluster_simulator.h"
#include "sim/simulator.h"

namespace gangway {
namespace {

// The peak scenario's traffic times `rate_scale` for the whole cluster (rate scale 1 is 85 % of
// one node's capacity).
Scenario peak_cluster(int nodes, ClusterRouterKind router, double rate_scale, double duration_s) {
  Scenario scenario = peak_mixed_scenario(std::chrono::seconds(1), seconds_to_duration(duration_s),
                                          std::chrono::seconds(60), rate_scale);
  ClusterSpec cluster;
  cluster.nodes = nodes;
  cluster.router = router;
  scenario.cluster = cluster;
  return scenario;
}

nlohmann::json summary(const ClusterResult& result) {
  const double window = result.total.measured_s;
  nlohmann::json nodes = nlohmann::json::array();
  for (const ClusterNodeResult& node : result.nodes) {
    nodes.push_back({node.metrics.total_json(window), node.node_time.to_json(), node.first_choice,
                     node.retries_received, node.gang_phases});
  }
  const SpilloverCounters& spill = result.spillover;
  return {{"total", result.total.metrics.total_json(window)},
          {"classes", result.total.metrics.classes_json(window)},
          {"events", result.total.events},
          {"nodes", nodes},
          {"spillover",
           {spill.retried, spill.admitted_elsewhere, spill.rejected_again, spill.not_retried}}};
}

void expect_every_request_ended_once(const ClusterResult& result) {
  const RunMetrics& metrics = result.total.metrics;
  expect_every_request_ended_once(metrics);
  // Each request was submitted to one node, or to two when it was retried elsewhere; each
  // submission ended once at its node.
  uint64_t submitted = 0;
  for (const ClusterNodeResult& node : result.nodes) {
    EXPECT_EQ(node.metrics.in_flight(), 0);
    submitted += node.metrics.arrivals();
  }
  EXPECT_EQ(submitted, metrics.arrivals() + static_cast<uint64_t>(result.spillover.retried));
  EXPECT_EQ(result.spillover.retried,
            result.spillover.admitted_elsewhere + result.spillover.rejected_again);
}

TEST(Cluster, SameSeedGivesTheSameRun) {
  Scenario scenario = peak_cluster(3, ClusterRouterKind::kLoadReport, 3.0, 4);
  scenario.cluster->pinned_share = 0.5;
  const ClusterResult first = simulate_cluster(scenario);
  const ClusterResult second = simulate_cluster(scenario);
  EXPECT_EQ(summary(first).dump(), summary(second).dump());
  scenario.seed += 1;
  EXPECT_NE(summary(simulate_cluster(scenario)).dump(), summary(first).dump());
}

TEST(Cluster, EveryRequestEndsOnceAcrossNodesWithEveryRouter) {
  for (const ClusterRouterKind router :
       {ClusterRouterKind::kRoundRobin, ClusterRouterKind::kLeastLoaded,
        ClusterRouterKind::kLoadReport, ClusterRouterKind::kAgentCheck}) {
    SCOPED_TRACE(to_string(router));
    // Overloaded (1.5x the cluster's capacity), with a GPU of node 0 lost for a while.
    Scenario scenario = peak_cluster(2, router, 3.5, 4);
    scenario.faults.push_back(FaultSpec{FaultKind::kGpuLoss, GpuId(2),
                                        Time::zero() + std::chrono::seconds(2),
                                        std::chrono::seconds(1), 1.0});
    const ClusterResult result = simulate_cluster(scenario);
    expect_every_request_ended_once(result);
    EXPECT_GT(result.total.metrics.total().rejected(), 0u);
    for (const ClusterNodeResult& node : result.nodes) EXPECT_GT(node.metrics.arrivals(), 0u);
  }
}

TEST(Cluster, AnOverloadedNodeSpillsToTheOthers) {
  // Two nodes offered 85 % of their capacity together, but every arrival pinned to node 0 (170 %
  // of its capacity): node 0 rejects, and the rejections find room on node 1. (At 80 % pinned,
  // 136 % of node 0's capacity, five seconds of arrivals do not overload it enough to reject:
  // its queues absorb them.)
  Scenario scenario = peak_cluster(2, ClusterRouterKind::kLoadReport, 2.0, 5);
  scenario.cluster->pinned_share = 1.0;
  const ClusterResult with = simulate_cluster(scenario);
  expect_every_request_ended_once(with);
  EXPECT_GT(with.spillover.retried, 0);
  EXPECT_GT(with.spillover.admitted_elsewhere, with.spillover.rejected_again);
  EXPECT_GT(with.nodes[1].retries_received, 0);
  EXPECT_EQ(with.nodes[0].retries_received,
            with.spillover.retried - with.nodes[1].retries_received);

  scenario.cluster->spillover = false;
  const ClusterResult without = simulate_cluster(scenario);
  expect_every_request_ended_once(without);
  EXPECT_EQ(without.spillover.retried, 0);
  EXPECT_GT(without.spillover.not_retried, 0);
  // Spillover turns many of node 0's rejections (at arrival, or shed from its queue before a
  // first token) into served requests, most of them on time. Not all: batch work sent on may be
  // shed again on node 1, which runs the large model's gang most of the time.
  const uint64_t rejected_alone = without.total.metrics.total().rejected();
  EXPECT_LT(with.total.metrics.total().rejected(), rejected_alone * 3 / 4);
  EXPECT_GT(with.total.metrics.total().slo_met(),
            without.total.metrics.total().slo_met() + rejected_alone / 4);
}

TEST(Cluster, AgentWeightsSendLessToANodeWithAPinnedHotTenant) {
  // Three nodes at 1.5x their capacity together; a third of the arrivals pinned to node 0 (the
  // way a balancer pins a tenant). Round robin still gives node 0 a third of the rest; the
  // agent-check weights (what each node's agent answers, polled every 250 ms) give it less.
  Scenario scenario = peak_cluster(3, ClusterRouterKind::kRoundRobin, 4.5, 2.5);
  scenario.cluster->pinned_share = 1.0 / 3;
  const ClusterResult round_robin = simulate_cluster(scenario);
  scenario.cluster->router = ClusterRouterKind::kAgentCheck;
  const ClusterResult agent = simulate_cluster(scenario);
  expect_every_request_ended_once(agent);
  const auto rest_to_node0 = [](const ClusterResult& result) {
    int64_t first = 0;
    for (const ClusterNodeResult& node : result.nodes) first += node.first_choice;
    // node 0's first choices beyond the pinned third, over the unpinned two thirds.
    return (static_cast<double>(result.nodes[0].first_choice) - first / 3.0) / (first * 2 / 3.0);
  };
  EXPECT_NEAR(rest_to_node0(round_robin), 1.0 / 3, 0.05);
  EXPECT_LT(rest_to_node0(agent), 0.2) << rest_to_node0(agent);
}

TEST(Cluster, RoundRobinRetriesSpreadOverTheOtherNodes) {
  // Everything pinned to node 0 of three, plain round robin: HAProxy's redispatch asks the
  // rotation again, so node 0's rejections go to nodes 1 and 2 alike, not all to node 1.
  Scenario scenario = peak_cluster(3, ClusterRouterKind::kRoundRobin, 3.0, 2.5);
  scenario.cluster->pinned_share = 1.0;
  scenario.cluster->retries = 1;
  const ClusterResult result = simulate_cluster(scenario);
  expect_every_request_ended_once(result);
  const int64_t to_1 = result.nodes[1].retries_received;
  const int64_t to_2 = result.nodes[2].retries_received;
  ASSERT_GT(to_1 + to_2, 100);
  EXPECT_EQ(result.nodes[0].retries_received, 0);
  EXPECT_NEAR(static_cast<double>(to_1) / static_cast<double>(to_1 + to_2), 0.5, 0.1)
      << to_1 << " against " << to_2;
}

TEST(Cluster, RetriesGoToAnotherNodeUpToTheLimit) {
  // Everything pinned to node 0 of three at 3x one node's capacity: node 0 rejects, and each
  // rejection may be sent on up to `retries` times, each time to another node than the last.
  Scenario scenario = peak_cluster(3, ClusterRouterKind::kAgentCheck, 3.0, 2.5);
  scenario.cluster->pinned_share = 1.0;
  scenario.cluster->retries = 1;
  const ClusterResult once = simulate_cluster(scenario);
  expect_every_request_ended_once(once);
  scenario.cluster->retries = 3;
  const ClusterResult thrice = simulate_cluster(scenario);
  expect_every_request_ended_once(thrice);
  EXPECT_GT(once.spillover.retried, 0);
  EXPECT_GE(thrice.spillover.retried, once.spillover.retried);
  EXPECT_LE(thrice.total.metrics.total().rejected(), once.total.metrics.total().rejected());
  EXPECT_EQ(thrice.nodes[0].retries_received + thrice.nodes[1].retries_received +
                thrice.nodes[2].retries_received,
            thrice.spillover.retried);
  scenario.cluster->retries = 0;
  const ClusterResult never = simulate_cluster(scenario);
  EXPECT_EQ(never.spillover.retried, 0);
  EXPECT_GT(never.spillover.not_retried, 0);
}

TEST(Cluster, OneNodeIsTheSingleNodeSimulator) {
  const Scenario scenario = peak_cluster(1, ClusterRouterKind::kLoadReport, 1.5, 3);
  const ClusterResult cluster = simulate_cluster(scenario);
  std::unique_ptr<RequestSource> source = make_request_source(scenario);
  Simulator simulator(scenario.node, scenario.scheduler, make_policy(scenario.policy), nullptr,
                      *source, simulation_options_of(scenario));
  const SimulationResult single = simulator.run();
  const double window = single.measured_s;
  EXPECT_EQ(cluster.total.metrics.total_json(window).dump(),
            single.metrics.total_json(window).dump());
  EXPECT_EQ(cluster.total.node_time.to_json().dump(), single.node_time.to_json().dump());
  EXPECT_EQ(cluster.total.events, single.events);
}

}  // namespace
}  // namespace gangway
