#include "config/cluster_config.h"

namespace gangway {

ClusterSpec read_cluster(const YamlValue& value, const ScenarioNames& names) {
  const YamlMap map = value.map({"nodes", "router", "spillover", "retries", "pinned_share",
                                 "pinned_tenant", "report_interval_ms", "agent_interval_ms"});
  ClusterSpec cluster;
  if (const auto v = map.get("nodes")) {
    cluster.nodes = static_cast<int>(v->integer_in(1, kMaxClusterNodes));
  }
  if (const auto v = map.get("router")) {
    const std::string name =
        v->choice({"load-report", "least-loaded", "round-robin", "agent-check"});
    cluster.router = name == "load-report"    ? ClusterRouterKind::kLoadReport
                     : name == "least-loaded" ? ClusterRouterKind::kLeastLoaded
                     : name == "agent-check"  ? ClusterRouterKind::kAgentCheck
                                              : ClusterRouterKind::kRoundRobin;
  }
  if (const auto v = map.get("spillover")) cluster.spillover = v->boolean();
  if (const auto v = map.get("retries")) {
    cluster.retries = static_cast<int>(v->integer_in(0, kMaxClusterNodes));
  }
  if (const auto v = map.get("pinned_share")) {
    cluster.pinned_share = v->number_in(0.0, 1.0, false, false);
  }
  if (const auto v = map.get("pinned_tenant")) cluster.pinned_tenant = names.tenant(*v);
  if (const auto v = map.get("report_interval_ms")) {
    cluster.report_interval = seconds_to_duration(v->non_negative_number() / 1e3);
  }
  if (const auto v = map.get("agent_interval_ms")) {
    cluster.agent_interval = seconds_to_duration(v->positive_number() / 1e3);
    if (cluster.agent_interval < std::chrono::milliseconds(1)) v->fail("expected at least 1 ms");
  }
  return cluster;
}

}  // namespace gangway
