#include "sim/time_series.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace gangway {

TimeSeries::TimeSeries(const NodeSpec& node, Duration bin)
    : classes_(node.slo_classes),
      bin_(bin),
      model_names_(node.model_names()),
      activities_(static_cast<size_t>(node.gpu_count), GpuActivity::kIdle) {
  if (bin <= Duration(0)) throw std::invalid_argument("TimeSeries: bin width must be > 0");
}

TimeSeries::Bin& TimeSeries::bin_at(Time time) {
  const auto index = static_cast<size_t>(std::max<int64_t>(0, (time - Time::zero()) / bin_));
  while (bins_.size() <= index) {
    // A bin no event fell in keeps the state of the one before.
    Bin bin;
    bin.queued = last_queued_;
    bin.queued_max = last_queued_;
    bin.live = last_live_;
    bin.classes.resize(classes_.size());
    bin.queued_by_model = last_queued_by_model_;
    bin.kv_used = last_kv_used_;
    bins_.push_back(std::move(bin));
  }
  return bins_[index];
}

void TimeSeries::on_arrival(Time arrival, SloClassId slo_class) {
  ++bin_at(arrival).classes.at(slo_class.value()).arrived;
}

void TimeSeries::on_finished(const RequestRecord& record) {
  Counts& counts = bin_at(record.arrival).classes.at(record.slo_class.value());
  if (record.outcome == Outcome::kRejected) ++counts.rejected;
  if (const auto ttft = record.ttft()) {
    ++counts.first_token;
    if (classes_[record.slo_class.value()].ttft_met_by(*ttft)) ++counts.ttft_on_target;
  }
  if (record.slo_met) ++counts.slo_met;
}

void TimeSeries::sample(Time now, int64_t queued, int64_t live) {
  Bin& bin = bin_at(now);
  bin.queued = queued;
  bin.queued_max = std::max(bin.queued_max, queued);
  bin.live = live;
  last_queued_ = queued;
  last_live_ = live;
}

template <typename Field>
void TimeSeries::integrate(Time from, Time to, int64_t weight, Field field) {
  if (weight == 0) return;
  while (from < to) {
    const int64_t index = (from - Time::zero()) / bin_;
    const Time bin_end = Time::zero() + bin_ * (index + 1);
    const Time until = std::min(to, bin_end);
    field(bin_at(from)) += weight * (until - from).count();
    from = until;
  }
}

void TimeSeries::sample_node(Time now, const Scheduler& scheduler) {
  if (node_sampled_) {
    for (size_t a = 0; a < gpus_by_activity_.size(); ++a) {
      integrate(last_node_sample_, now, gpus_by_activity_[a],
                [a](Bin& bin) -> int64_t& { return bin.gpu_ns[a]; });
    }
    if (gang_phase_ != GangPhase::kOff) {
      const size_t phase = gang_phase_ == GangPhase::kPending ? 0 : 1;
      integrate(last_node_sample_, now, 1,
                [phase](Bin& bin) -> int64_t& { return bin.gang_ns[phase]; });
    }
  }
  node_sampled_ = true;
  last_node_sample_ = now;
  scheduler.gpu_activities(activities_);
  gpus_by_activity_.fill(0);
  for (const GpuActivity activity : activities_) ++gpus_by_activity_[static_cast<size_t>(activity)];
  const SchedulerState& state = scheduler.state();
  gang_phase_ = state.gang.phase;

  const size_t models = model_names_.size();
  last_queued_by_model_.assign(models, 0);
  for (size_t m = 0; m < models && m < state.queued_by_class.size(); ++m) {
    for (const int64_t n : state.queued_by_class[m]) last_queued_by_model_[m] += n;
  }
  std::vector<int64_t>& used = scratch_used_;
  std::vector<int64_t>& capacity = scratch_capacity_;
  used.assign(models, 0);
  capacity.assign(models, 0);
  for (const Replica& replica : state.replicas) {
    used[replica.model.value()] += replica.kv.used_blocks();
    capacity[replica.model.value()] += replica.kv.capacity_blocks();
  }
  if (state.large) {
    used[state.large->model.value()] += state.large->kv.used_blocks();
    capacity[state.large->model.value()] += state.large->kv.capacity_blocks();
  }
  last_kv_used_.assign(models, 0.0);
  for (size_t m = 0; m < models; ++m) {
    if (capacity[m] > 0) last_kv_used_[m] = static_cast<double>(used[m]) / capacity[m];
  }
  Bin& bin = bin_at(now);
  bin.queued_by_model = last_queued_by_model_;
  bin.kv_used = last_kv_used_;
}

nlohmann::json TimeSeries::to_json() const {
  nlohmann::json t = nlohmann::json::array();
  nlohmann::json queued = nlohmann::json::array();
  nlohmann::json queued_max = nlohmann::json::array();
  nlohmann::json live = nlohmann::json::array();
  for (size_t i = 0; i < bins_.size(); ++i) {
    t.push_back(to_seconds(bin_) * static_cast<double>(i));
    queued.push_back(bins_[i].queued);
    queued_max.push_back(bins_[i].queued_max);
    live.push_back(bins_[i].live);
  }
  nlohmann::json classes = nlohmann::json::object();
  for (size_t c = 0; c < classes_.size(); ++c) {
    nlohmann::json arrived = nlohmann::json::array();
    nlohmann::json rejected = nlohmann::json::array();
    nlohmann::json first_token = nlohmann::json::array();
    nlohmann::json on_target = nlohmann::json::array();
    nlohmann::json slo_met = nlohmann::json::array();
    for (const Bin& bin : bins_) {
      arrived.push_back(bin.classes[c].arrived);
      rejected.push_back(bin.classes[c].rejected);
      first_token.push_back(bin.classes[c].first_token);
      on_target.push_back(bin.classes[c].ttft_on_target);
      slo_met.push_back(bin.classes[c].slo_met);
    }
    classes[classes_[c].name] = {{"arrived", arrived},
                                 {"rejected", rejected},
                                 {"first_token", first_token},
                                 {"ttft_on_target", on_target},
                                 {"slo_met", slo_met}};
  }
  nlohmann::json json = {{"bin_s", to_seconds(bin_)}, {"t_s", t},     {"queued", queued},
                         {"queued_max", queued_max},  {"live", live}, {"classes", classes}};
  if (!node_sampled_) return json;
  nlohmann::json gpu_s = nlohmann::json::object();
  for (int a = 0; a < kGpuActivityCount; ++a) {
    nlohmann::json values = nlohmann::json::array();
    for (const Bin& bin : bins_) values.push_back(1e-9 * static_cast<double>(bin.gpu_ns[a]));
    gpu_s[to_string(static_cast<GpuActivity>(a))] = values;
  }
  nlohmann::json pending = nlohmann::json::array();
  nlohmann::json active = nlohmann::json::array();
  for (const Bin& bin : bins_) {
    pending.push_back(1e-9 * static_cast<double>(bin.gang_ns[0]));
    active.push_back(1e-9 * static_cast<double>(bin.gang_ns[1]));
  }
  nlohmann::json queued_by_model = nlohmann::json::object();
  nlohmann::json kv_used = nlohmann::json::object();
  for (size_t m = 0; m < model_names_.size(); ++m) {
    nlohmann::json queue = nlohmann::json::array();
    nlohmann::json kv = nlohmann::json::array();
    for (const Bin& bin : bins_) {
      queue.push_back(m < bin.queued_by_model.size() ? bin.queued_by_model[m] : 0);
      kv.push_back(m < bin.kv_used.size() ? bin.kv_used[m] : 0.0);
    }
    queued_by_model[model_names_[m]] = queue;
    kv_used[model_names_[m]] = kv;
  }
  json["gpu_s"] = gpu_s;
  json["gang_s"] = {{"pending", pending}, {"active", active}};
  json["queued_by_model"] = queued_by_model;
  json["kv_used"] = kv_used;
  return json;
}

int64_t queued_requests(const SchedulerState& state) {
  int64_t queued = 0;
  for (const std::vector<int64_t>& model : state.queued_by_class) {
    for (const int64_t n : model) queued += n;
  }
  return queued;
}

}  // namespace gangway
