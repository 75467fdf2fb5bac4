#include "config/scenario.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "config/admission_config.h"
#include "config/cluster_config.h"
#include "config/memory_check.h"
#include "config/model_config.h"
#include "config/node_config.h"
#include "config/scenario_names.h"
#include "config/scheduler_config.h"
#include "config/slo_config.h"
#include "config/trace_config.h"
#include "config/workload_config.h"
#include "config/yaml_reader.h"

namespace gangway {
namespace {

std::string default_name(const std::string& path) {
  const std::string stem = std::filesystem::path(path).stem().string();
  return stem.empty() ? "scenario" : stem;
}

void read_run_settings(const YamlMap& root, Scenario& scenario) {
  if (const auto v = root.get("name")) scenario.name = v->text();
  if (const auto v = root.get("seed")) {
    scenario.seed = static_cast<uint64_t>(v->integer_in(0, std::numeric_limits<int64_t>::max()));
  }
  if (const auto v = root.get("duration_s")) {
    scenario.duration = seconds_to_duration(v->positive_number());
    if (scenario.duration <= Duration(0)) v->fail("expected at least one nanosecond");
  }
  if (const auto v = root.get("drain_s")) {
    scenario.drain_limit = seconds_to_duration(v->non_negative_number());
  }
  if (const auto v = root.get("warmup_s")) {
    scenario.warmup = seconds_to_duration(v->non_negative_number());
    if (scenario.warmup >= scenario.duration) {
      v->fail("expected less than duration_s (the measurement window would be empty)");
    }
  }
}

}  // namespace

PolicySpec default_policy_spec() {
  PolicySpec spec;
  spec.name = "gangway";
  spec.mode = ExecutionMode::kLease;
  return spec;
}

Scenario parse_scenario(const std::string& yaml_text, const std::string& path,
                        const std::vector<ScenarioSetting>& settings) {
  YamlDocument document(yaml_text, path);
  document.apply_settings(settings);
  const YamlValue root_value = document.root();
  if (!root_value.is_map()) {
    root_value.fail("expected a scenario: a mapping with at least models and workload, got " +
                    root_value.describe());
  }
  const YamlMap root =
      root_value.map({"name", "seed", "duration_s", "drain_s", "warmup_s", "node", "scheduler",
                      "models", "slo_classes", "tenants", "policy", "workload", "trace_mapping",
                      "server", "admission", "faults", "cluster"});
  Scenario scenario;
  scenario.path = path;
  scenario.name = default_name(path);
  read_run_settings(root, scenario);

  NodeSpec& node = scenario.node;
  node.hardware = h100_sxm_80gb();
  if (const auto v = root.get("node")) read_node_section(*v, node);
  node.slo_classes = default_slo_classes();
  if (const auto v = root.get("slo_classes")) node.slo_classes = read_slo_classes(*v);
  const YamlValue models = root.required("models");
  read_models(models, node);

  if (const auto v = root.get("scheduler")) {
    scenario.scheduler = read_scheduler_options(*v);
    check_scheduler_against_node(*v, scenario.scheduler, node);
  }
  check_memory_layout(node, scenario.scheduler, models);
  if (const auto v = root.get("policy")) {
    scenario.policy = read_policy(*v);
    check_policy_against_node(*v, scenario.policy, node);
  }

  scenario.tenants = {"default"};
  if (const auto v = root.get("tenants")) scenario.tenants = read_tenants(*v);
  const ScenarioNames names(node, scenario.tenants);
  if (const auto v = root.get("admission"))
    scenario.scheduler.admission = read_admission(*v, names);
  if (const auto v = root.get("faults")) scenario.faults = read_faults(*v, node);
  if (const auto v = root.get("cluster")) scenario.cluster = read_cluster(*v, names);
  scenario.trace_mapping = default_trace_mapping(names);
  if (const auto v = root.get("trace_mapping")) {
    scenario.trace_mapping = read_trace_mapping(*v, names, std::nullopt);
  }

  WorkloadSection workload =
      read_workload(root.get("workload"), root_value, names, scenario.trace_mapping, path);
  scenario.streams = std::move(workload.streams);
  scenario.trace = std::move(workload.trace);
  if (const auto v = root.get("server")) {
    scenario.server = read_server_section(*v, node, path, scenario.scheduler, scenario.policy);
  }
  return scenario;
}

Scenario load_scenario(const std::string& path, const std::vector<ScenarioSetting>& settings) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw InputError::at(path, std::nullopt, "", "expected a scenario file, got a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError::at(path, std::nullopt, "",
                         std::string("cannot open the scenario file: ") + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError::at(path, std::nullopt, "", "cannot read the scenario file");
  return parse_scenario(text.str(), path, settings);
}

}  // namespace gangway
