#include "config/slo_config.h"

#include <limits>
#include <optional>

namespace gangway {
namespace {

SloClass read_slo_class(const YamlMap& map, size_t index) {
  SloClass slo;
  slo.id = SloClassId(static_cast<uint8_t>(index));
  slo.name = map.required("name").text();
  if (const auto v = map.get("ttft_ms")) slo.ttft_target = ms_to_duration(v->positive_number());
  if (const auto v = map.get("tpot_ms")) slo.tpot_target = ms_to_duration(v->positive_number());
  if (const auto v = map.get("weight")) slo.weight = v->positive_number();
  slo.rank = static_cast<int>(index);
  if (const auto v = map.get("rank")) {
    slo.rank = static_cast<int>(v->integer_in(0, std::numeric_limits<int>::max()));
  }
  if (const auto v = map.get("sheddable")) slo.sheddable = v->boolean();
  if (const auto v = map.get("attainment_target")) {
    slo.attainment_target = v->number_in(0.0, 1.0, false, false);
  }
  if (const auto v = map.get("on_predicted_miss")) {
    const std::string action = v->choice({"reject", "downgrade", "best_effort"});
    slo.on_predicted_miss = action == "reject"      ? MissAction::kReject
                            : action == "downgrade" ? MissAction::kDowngrade
                                                    : MissAction::kBestEffort;
  }
  return slo;
}

std::vector<std::string> class_names(const std::vector<SloClass>& classes) {
  std::vector<std::string> names;
  for (const SloClass& slo : classes) names.push_back(slo.name);
  return names;
}

}  // namespace

std::vector<SloClass> read_slo_classes(const YamlValue& value) {
  const std::vector<YamlValue> items = value.list();
  if (items.empty()) value.fail("expected at least one SLO class");
  if (items.size() > std::numeric_limits<SloClassId::rep_type>::max()) {
    value.fail("expected at most " +
               std::to_string(std::numeric_limits<SloClassId::rep_type>::max()) + " SLO classes");
  }
  std::vector<SloClass> classes;
  std::vector<YamlMap> maps;
  for (size_t i = 0; i < items.size(); ++i) {
    maps.push_back(items[i].map({"name", "ttft_ms", "tpot_ms", "weight", "rank", "sheddable",
                                 "downgrade_to", "on_predicted_miss", "attainment_target"}));
    classes.push_back(read_slo_class(maps.back(), i));
    for (size_t j = 0; j < i; ++j) {
      if (classes[j].name == classes[i].name) {
        maps[i].required("name").fail("duplicate SLO class name " + in_quotes(classes[i].name) +
                                      " (also " + items[j].path() + ")");
      }
    }
  }
  // Downgrade targets may name classes written further down the list.
  for (size_t i = 0; i < classes.size(); ++i) {
    const auto target = maps[i].get("downgrade_to");
    if (!target) continue;
    const std::string name = target->text();
    std::optional<size_t> found;
    for (size_t j = 0; j < classes.size(); ++j) {
      if (classes[j].name == name) found = j;
    }
    if (!found) {
      target->fail("unknown SLO class " + in_quotes(name) +
                   "; known classes: " + join_names(class_names(classes)));
    }
    if (classes[*found].rank <= classes[i].rank) {
      target->fail("expected a class of higher rank (less important) than " +
                   in_quotes(classes[i].name) + " (rank " + std::to_string(classes[i].rank) +
                   "), got " + in_quotes(name) + " (rank " + std::to_string(classes[*found].rank) +
                   ")");
    }
    classes[i].downgrade_to = classes[*found].id;
    // A class that names where to downgrade to downgrades unless told otherwise.
    if (!maps[i].get("on_predicted_miss")) classes[i].on_predicted_miss = MissAction::kDowngrade;
  }
  for (size_t i = 0; i < classes.size(); ++i) {
    if (classes[i].on_predicted_miss == MissAction::kDowngrade && !classes[i].downgrade_to) {
      maps[i]
          .get("on_predicted_miss")
          ->fail("downgrade needs a class to downgrade to: add downgrade_to to class " +
                 in_quotes(classes[i].name));
    }
  }
  return classes;
}

std::vector<std::string> read_tenants(const YamlValue& value) {
  const std::vector<YamlValue> items = value.list();
  if (items.empty()) value.fail("expected at least one tenant name");
  if (items.size() > std::numeric_limits<TenantId::rep_type>::max()) {
    value.fail("expected at most " +
               std::to_string(std::numeric_limits<TenantId::rep_type>::max()) + " tenants");
  }
  std::vector<std::string> tenants;
  for (const YamlValue& item : items) {
    const std::string name = item.text();
    for (const std::string& seen : tenants) {
      if (seen == name) item.fail("duplicate tenant name " + in_quotes(name));
    }
    tenants.push_back(name);
  }
  return tenants;
}

}  // namespace gangway
