#include "metrics/run_metrics.h"

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_set>
#include <utility>

namespace gangway {

namespace {

void require_unique(const std::vector<std::string>& names, const char* what) {
  std::unordered_set<std::string> seen;
  for (const std::string& name : names) {
    if (!seen.insert(name).second) {
      throw std::invalid_argument(std::string("RunMetrics: duplicate ") + what + " name '" + name +
                                  "'");
    }
  }
}

nlohmann::json groups_json(const std::vector<std::string>& names,
                           const std::vector<RequestStats>& groups, double simulated_s) {
  nlohmann::json out = nlohmann::json::object();
  for (std::size_t i = 0; i < names.size(); ++i) out[names[i]] = groups[i].to_json(simulated_s);
  return out;
}

}  // namespace

RunMetrics::RunMetrics(std::vector<std::string> slo_class_names,
                       std::vector<std::string> model_names)
    : slo_class_names_(std::move(slo_class_names)), model_names_(std::move(model_names)) {
  require_unique(slo_class_names_, "SLO class");
  require_unique(model_names_, "model");
  by_class_.resize(slo_class_names_.size());
  by_model_.resize(model_names_.size());
  by_model_class_.resize(model_names_.size() * slo_class_names_.size());
}

std::size_t RunMetrics::class_index(SloClassId slo_class) const {
  const std::size_t index = slo_class.value();
  if (index >= by_class_.size()) {
    throw std::out_of_range("RunMetrics: unknown SLO class id " + std::to_string(index));
  }
  return index;
}

std::size_t RunMetrics::model_index(ModelId model) const {
  const std::size_t index = model.value();
  if (index >= by_model_.size()) {
    throw std::out_of_range("RunMetrics: unknown model id " + std::to_string(index));
  }
  return index;
}

void RunMetrics::on_arrival(ModelId model, SloClassId slo_class) {
  // Check both ids before counting anything, so a bad id leaves the groups consistent.
  const std::size_t class_at = class_index(slo_class);
  const std::size_t model_at = model_index(model);
  by_class_[class_at].on_arrival();
  by_model_[model_at].on_arrival();
  by_model_class_[model_at * by_class_.size() + class_at].on_arrival();
  total_.on_arrival();
}

void RunMetrics::on_finished(const RequestRecord& record) {
  const std::size_t class_at = class_index(record.slo_class);
  const std::size_t model_at = model_index(record.model);
#ifdef GANGWAY_CHECK_INVARIANTS
  if (by_class_[class_at].in_flight() <= 0 || by_model_[model_at].in_flight() <= 0) {
    throw std::logic_error("RunMetrics: request " + std::to_string(record.id.value()) +
                           " finished but no request of its class and model is in flight");
  }
#endif
  by_class_[class_at].on_finished(record);
  by_model_[model_at].on_finished(record);
  by_model_class_[model_at * by_class_.size() + class_at].on_finished(record);
  total_.on_finished(record);
}

const RequestStats& RunMetrics::slo_class(SloClassId slo_class) const {
  return by_class_[class_index(slo_class)];
}

const RequestStats& RunMetrics::model(ModelId model) const {
  return by_model_[model_index(model)];
}

nlohmann::json RunMetrics::classes_json(double simulated_s) const {
  return groups_json(slo_class_names_, by_class_, simulated_s);
}

nlohmann::json RunMetrics::models_json(double simulated_s) const {
  return groups_json(model_names_, by_model_, simulated_s);
}

const RequestStats& RunMetrics::model_class(ModelId model, SloClassId slo_class) const {
  return by_model_class_[model_index(model) * by_class_.size() + class_index(slo_class)];
}

nlohmann::json RunMetrics::model_classes_json(double simulated_s) const {
  nlohmann::json out = nlohmann::json::object();
  for (std::size_t m = 0; m < model_names_.size(); ++m) {
    nlohmann::json classes = nlohmann::json::object();
    for (std::size_t c = 0; c < slo_class_names_.size(); ++c) {
      const RequestStats& stats = by_model_class_[m * by_class_.size() + c];
      if (stats.arrived() > 0) classes[slo_class_names_[c]] = stats.to_json(simulated_s);
    }
    out[model_names_[m]] = std::move(classes);
  }
  return out;
}

nlohmann::json RunMetrics::total_json(double simulated_s) const {
  return total_.to_json(simulated_s);
}

}  // namespace gangway
