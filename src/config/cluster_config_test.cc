// The scenario's `cluster:` section: defaults, every key, and bad values as located errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/scenario.h"
#include "config/scenario_errors_testing.h"
#include "core/input_error.h"

namespace gangway {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Five lines: a small model and one stream.
const std::string kBase = R"(models:
  - {name: llama-3-8b, tier: small, shape: llama-3-8b}
workload:
  streams:
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 10}}
)";

std::string error_of(const std::string& yaml) {
  return scenario_error_of(yaml, "bad.yaml");
}

TEST(ClusterConfig, AbsentMeansOneNodeWithoutACluster) {
  EXPECT_FALSE(parse_scenario(kBase, "ok.yaml").cluster.has_value());
}

TEST(ClusterConfig, DefaultsAndEveryKey) {
  const ClusterSpec defaults = *parse_scenario(kBase + "cluster: {}\n", "ok.yaml").cluster;
  EXPECT_EQ(defaults.nodes, 1);
  EXPECT_EQ(defaults.router, ClusterRouterKind::kLoadReport);
  EXPECT_TRUE(defaults.spillover);
  EXPECT_EQ(defaults.pinned_share, 0.0);
  EXPECT_EQ(defaults.report_interval, Duration(0));
  const ClusterSpec spec =
      *parse_scenario(kBase +
                          "cluster: {nodes: 4, router: round-robin, spillover: false, "
                          "pinned_share: 0.25, report_interval_ms: 100}\n",
                      "ok.yaml")
           .cluster;
  EXPECT_EQ(spec.nodes, 4);
  EXPECT_EQ(spec.router, ClusterRouterKind::kRoundRobin);
  EXPECT_FALSE(spec.spillover);
  EXPECT_EQ(spec.pinned_share, 0.25);
  EXPECT_EQ(spec.report_interval, std::chrono::milliseconds(100));
  EXPECT_EQ(parse_scenario(kBase + "cluster: {router: least-loaded}\n", "ok.yaml").cluster->router,
            ClusterRouterKind::kLeastLoaded);
}

TEST(ClusterConfig, TheAgentCheckBalancerKeys) {
  const ClusterSpec defaults = *parse_scenario(kBase + "cluster: {}\n", "ok.yaml").cluster;
  EXPECT_EQ(defaults.retries, 1);
  EXPECT_FALSE(defaults.pinned_tenant.has_value());
  EXPECT_EQ(defaults.agent_interval, std::chrono::milliseconds(250));
  const ClusterSpec spec =
      *parse_scenario(kBase +
                          "tenants: [default, hot]\n"
                          "cluster: {nodes: 3, router: agent-check, retries: 3, "
                          "pinned_tenant: hot, agent_interval_ms: 100}\n",
                      "ok.yaml")
           .cluster;
  EXPECT_EQ(spec.router, ClusterRouterKind::kAgentCheck);
  EXPECT_EQ(spec.retries, 3);
  ASSERT_TRUE(spec.pinned_tenant.has_value());
  EXPECT_EQ(spec.pinned_tenant->value(), 1);
  EXPECT_EQ(spec.agent_interval, std::chrono::milliseconds(100));
  EXPECT_THAT(error_of(kBase + "cluster:\n  pinned_tenant: nobody\n"),
              StartsWith("bad.yaml:7: cluster.pinned_tenant: "));
  EXPECT_THAT(error_of(kBase + "cluster:\n  retries: -1\n"),
              StartsWith("bad.yaml:7: cluster.retries: "));
  EXPECT_THAT(error_of(kBase + "cluster:\n  agent_interval_ms: 0\n"),
              StartsWith("bad.yaml:7: cluster.agent_interval_ms: "));
}

TEST(ClusterConfig, BadValuesAreLocatedErrors) {
  EXPECT_THAT(error_of(kBase + "cluster:\n  nodes: 0\n"),
              StartsWith("bad.yaml:7: cluster.nodes: expected a whole number in [1, 64]"));
  EXPECT_THAT(error_of(kBase + "cluster:\n  nodes: 2.5\n"),
              StartsWith("bad.yaml:7: cluster.nodes"));
  const std::string router = error_of(kBase + "cluster:\n  nodes: 2\n  router: random\n");
  EXPECT_THAT(router, StartsWith("bad.yaml:8: cluster.router: "));
  EXPECT_THAT(router, HasSubstr("load-report, least-loaded, round-robin, agent-check"));
  EXPECT_THAT(error_of(kBase + "cluster:\n  pinned_share: 1.5\n"),
              StartsWith("bad.yaml:7: cluster.pinned_share: "));
  EXPECT_THAT(error_of(kBase + "cluster:\n  report_interval_ms: -1\n"),
              StartsWith("bad.yaml:7: cluster.report_interval_ms: "));
  EXPECT_THAT(error_of(kBase + "cluster:\n  node: 2\n"),
              StartsWith("bad.yaml:7: cluster.node: unknown key"));
}

}  // namespace
}  // namespace gangway
