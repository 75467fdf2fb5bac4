#include "config/scenario_names.h"

namespace gangway {

ModelId ScenarioNames::model(const YamlValue& value) const {
  const std::string name = value.text();
  if (const auto id = node_.find_model(name)) return *id;
  std::vector<std::string> known;
  for (const ModelSpec& model : node_.models) known.push_back(model.name);
  value.fail("unknown model " + in_quotes(name) + "; known models: " + join_names(known));
}

SloClassId ScenarioNames::slo_class(const YamlValue& value) const {
  const std::string name = value.text();
  if (const auto id = node_.find_slo_class(name)) return *id;
  std::vector<std::string> known;
  for (const SloClass& slo : node_.slo_classes) known.push_back(slo.name);
  value.fail("unknown SLO class " + in_quotes(name) + "; known classes: " + join_names(known));
}

TenantId ScenarioNames::tenant(const YamlValue& value) const {
  const std::string name = value.text();
  for (size_t i = 0; i < tenants_.size(); ++i) {
    if (tenants_[i] == name) return TenantId(static_cast<uint16_t>(i));
  }
  value.fail("unknown tenant " + in_quotes(name) + "; known tenants: " + join_names(tenants_));
}

ModelId ScenarioNames::first_small_model() const {
  for (const ModelSpec& model : node_.models) {
    if (!model.is_large()) return model.id;
  }
  return ModelId(0);  // unreachable for a read scenario: read_models requires a small model
}

}  // namespace gangway
