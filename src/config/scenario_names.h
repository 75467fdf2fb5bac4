// Turns the names a scenario file uses for its models, SLO classes and tenants into the dense
// ids the run-time structs carry, failing at the key that names something unknown with the list
// of known names. Used by the workload and trace sections, which are read after the node's.
#pragma once

#include <string>
#include <vector>

#include "config/yaml_reader.h"
#include "core/ids.h"
#include "core/node_spec.h"

namespace gangway {

class ScenarioNames {
 public:
  // Both must outlive this object.
  ScenarioNames(const NodeSpec& node, const std::vector<std::string>& tenants)
      : node_(node), tenants_(tenants) {}

  ModelId model(const YamlValue& value) const;
  SloClassId slo_class(const YamlValue& value) const;
  TenantId tenant(const YamlValue& value) const;
  // The default model of a trace row: the first small model in the `models:` list.
  ModelId first_small_model() const;
  const NodeSpec& node() const { return node_; }

 private:
  const NodeSpec& node_;
  const std::vector<std::string>& tenants_;
};

}  // namespace gangway
