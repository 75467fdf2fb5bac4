// Request statistics for one run, kept per SLO class, per model and for the whole node.
//
// Why: reports break goodput and latency down by class (the SLA view) and by model (the SM vs LM
// view), and the node total is what policies are compared on. One object routes each event to the
// three groups, so they can never disagree. It also keeps the node-wide arrival and finish
// counters the simulator uses to prove that every request ends with exactly one outcome:
// in_flight() must be 0 once a run has drained.
//
// Classes and models are named at construction, indexed by SloClassId / ModelId value (dense, from
// 0). An id outside those ranges is a driver bug and throws std::out_of_range. Never reads a clock;
// memory is constant in the number of requests. Not thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/outcome.h"
#include "metrics/request_stats.h"

namespace gangway {

class RunMetrics {
 public:
  // Names must be unique within each list (they key the JSON objects); throws
  // std::invalid_argument otherwise.
  RunMetrics(std::vector<std::string> slo_class_names, std::vector<std::string> model_names);

  void on_arrival(ModelId model, SloClassId slo_class);
  // Routes the record to its class, its model and the node total (by record.slo_class and
  // record.model). With GANGWAY_CHECK_INVARIANTS, throws std::logic_error when no request of that
  // class and model is in flight (a driver finished a request twice or never reported it).
  void on_finished(const RequestRecord& record);

  uint64_t arrivals() const { return total_.arrived(); }
  uint64_t finished() const { return total_.finished(); }
  // Requests that arrived and have not finished; must be 0 at the end of a drained run, and is
  // never negative unless a driver finished a request it never reported arriving.
  int64_t in_flight() const { return total_.in_flight(); }

  const RequestStats& total() const { return total_; }
  const RequestStats& slo_class(SloClassId slo_class) const;
  const RequestStats& model(ModelId model) const;
  const std::vector<std::string>& slo_class_names() const { return slo_class_names_; }
  const std::vector<std::string>& model_names() const { return model_names_; }

  // {class name: RequestStats::to_json(simulated_s)} for every class, including idle ones.
  nlohmann::json classes_json(double simulated_s) const;
  // {model name: RequestStats::to_json(simulated_s)} for every model.
  nlohmann::json models_json(double simulated_s) const;
  // One model's requests of one class (the SM vs LM view of a class's SLO).
  const RequestStats& model_class(ModelId model, SloClassId slo_class) const;
  // {model name: {class name: RequestStats::to_json}} for the pairs that saw arrivals.
  nlohmann::json model_classes_json(double simulated_s) const;
  // RequestStats::to_json(simulated_s) of the node total.
  nlohmann::json total_json(double simulated_s) const;

 private:
  std::size_t class_index(SloClassId slo_class) const;
  std::size_t model_index(ModelId model) const;

  std::vector<std::string> slo_class_names_;
  std::vector<std::string> model_names_;
  std::vector<RequestStats> by_class_;
  std::vector<RequestStats> by_model_;
  std::vector<RequestStats> by_model_class_;  // [model * classes + class]
  RequestStats total_;
};

}  // namespace gangway
