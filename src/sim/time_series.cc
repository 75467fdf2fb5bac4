#include "sim/time_series.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace gangway {

TimeSeries::TimeSeries(const NodeSpec& node, Duration bin) : classes_(node.slo_classes), bin_(bin) {
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
  return {{"bin_s", to_seconds(bin_)}, {"t_s", t},     {"queued", queued},
          {"queued_max", queued_max},  {"live", live}, {"classes", classes}};
}

int64_t queued_requests(const SchedulerState& state) {
  int64_t queued = 0;
  for (const std::vector<int64_t>& model : state.queued_by_class) {
    for (const int64_t n : model) queued += n;
  }
  return queued;
}

}  // namespace gangway
