#include "sim/cluster_simulator.h"

#include <algorithm>

namespace gangway {

ClusterSimulator::ClusterSimulator(const NodeSpec& node, const SchedulerOptions& scheduler_options,
                                   const PolicyFactory& make_policy, const ClusterSpec& cluster,
                                   uint64_t seed, RequestSource& source, SimulationOptions options)
    : cluster_(cluster),
      options_(std::move(options)),
      arrivals_(source, Time::zero() + options_.duration),
      router_(cluster, seed),
      metrics_(node.slo_class_names(), node.model_names()),
      first_choice_(static_cast<size_t>(cluster.nodes), 0),
      retries_received_(static_cast<size_t>(cluster.nodes), 0) {
  if (options_.series_bin > Duration(0)) series_.emplace(node, options_.series_bin);
  for (int i = 0; i < cluster.nodes; ++i) {
    NodeDriverOptions driver;
    driver.warmup = options_.warmup;
    driver.duration = options_.duration;
    if (i == 0) driver.faults = options_.faults;
    driver.node = static_cast<uint16_t>(i);
    drivers_.push_back(std::make_unique<NodeDriver>(node, scheduler_options, make_policy(), nullptr,
                                                    events_, driver));
    drivers_.back()->set_finished_sink(
        [this, i](const RequestRecord& record) { on_finished(static_cast<size_t>(i), record); });
    schedulers_.push_back(&drivers_.back()->scheduler());
  }
}

ClusterSimulator::~ClusterSimulator() = default;

bool ClusterSimulator::all_idle() const {
  return std::all_of(drivers_.begin(), drivers_.end(),
                     [](const auto& d) { return d->scheduler().live_requests() == 0; });
}

ClusterResult ClusterSimulator::run() {
  const Time window_end = Time::zero() + options_.duration;
  const Time hard_end = window_end + options_.drain_limit;
  arrivals_.schedule_next(now_, events_);
  drivers_.front()->schedule_faults();

  while (!events_.empty()) {
    const SimEvent event = events_.pop();
    if (event.time > hard_end) break;
    for (const auto& driver : drivers_) driver->before_event(event.time);
    now_ = event.time;
    ++events_processed_;
    if (event.kind == SimEventKind::kArrival) {
      route_next_arrival();
    } else {
      NodeDriver& driver = *drivers_.at(event.node);
      driver.handle(event, now_);
      driver.after_event(now_);
      send_on_rejections();
    }
    if (series_) sample_series();
    if (!arrivals_.pending() && all_idle()) break;
  }
  for (const auto& driver : drivers_) driver->stop(now_);

  ClusterResult result{
      SimulationResult{
          to_seconds(now_), to_seconds(options_.duration - options_.warmup), events_processed_,
          requests_, std::move(metrics_), drivers_.front()->node_time(),
          drivers_.front()->scheduler().state().gang.phases_started, std::move(series_)},
      {},
      spillover_};
  for (size_t i = 0; i < drivers_.size(); ++i) {
    NodeDriver& driver = *drivers_[i];
    result.nodes.push_back(ClusterNodeResult{std::move(driver.metrics()), driver.node_time(),
                                             driver.scheduler().state().gang.phases_started,
                                             first_choice_[i], retries_received_[i]});
  }
  return result;
}

void ClusterSimulator::sample_series() {
  int64_t queued = 0;
  int64_t live = 0;
  for (const auto& driver : drivers_) {
    queued += queued_requests(driver->scheduler().state());
    live += driver->scheduler().live_requests();
  }
  series_->sample(now_, queued, live);
}

void ClusterSimulator::on_finished(size_t node, const RequestRecord& record) {
  const auto found = in_flight_.find(record.id.value());
  if (found != in_flight_.end()) {
    Attempt& attempt = found->second;
    // Rejected or dropped before its first token with a reason a balancer retries: the
    // balancer sends it on (below, at this same instant) and this is not its outcome.
    const bool busy = record.outcome != Outcome::kCompleted && !record.first_token &&
                      balancer_retries(record.reason);
    if (busy && cluster_.spillover && drivers_.size() > 1 && attempt.sent_on < cluster_.retries) {
      to_send_on_.push_back({record.id, node, record.reason});
      return;
    }
    if (busy && attempt.counted && attempt.sent_on == 0) ++spillover_.not_retried;
    in_flight_.erase(found);
  }
  if (measured(record.arrival)) metrics_.on_finished(record);
  if (series_) series_->on_finished(record);
}

void ClusterSimulator::send_on_rejections() {
  // Sending one on may turn others away (a shed), which join the list.
  while (!to_send_on_.empty()) {
    const Rejection rejection = to_send_on_.front();
    to_send_on_.pop_front();
    Attempt& attempt = in_flight_.at(rejection.id.value());
    const std::optional<size_t> other =
        router_.pick_other(attempt.item.spec, schedulers_, rejection.node, now_);
    ++attempt.sent_on;
    if (attempt.counted) {
      ++spillover_.retried;
      ++spillover_.retried_by_reason[static_cast<size_t>(rejection.reason)];
      ++retries_received_[*other];
    }
    NodeDriver& driver = *drivers_[*other];
    const SubmitResult submitted = driver.submit(attempt.item, now_);
    if (attempt.counted) {
      ++(submitted.accepted ? spillover_.admitted_elsewhere : spillover_.rejected_again);
    }
    driver.after_event(now_);
  }
}

void ClusterSimulator::route_next_arrival() {
  const WorkloadItem item = arrivals_.take();
  ++requests_;
  const bool counted = measured(item.spec.arrival);
  if (counted) metrics_.on_arrival(item.spec.model, item.spec.slo_class);
  if (series_) series_->on_arrival(item.spec.arrival, item.spec.slo_class);
  const size_t node = router_.pick(item.spec, schedulers_, now_);
  if (counted) ++first_choice_[node];
  in_flight_.emplace(item.spec.id.value(), Attempt{item, 0, counted});
  NodeDriver& driver = *drivers_[node];
  driver.submit(item, now_);
  driver.after_event(now_);
  send_on_rejections();
  arrivals_.schedule_next(now_, events_);
}

}  // namespace gangway
