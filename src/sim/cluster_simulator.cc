#include "sim/cluster_simulator.h"

#include <algorithm>

namespace gangway {

ClusterSimulator::ClusterSimulator(const NodeSpec& node, const SchedulerOptions& scheduler_options,
                                   const PolicyFactory& make_policy, const ClusterSpec& cluster,
                                   uint64_t seed, RequestSource& source, SimulationOptions options)
    : node_(node),
      cluster_(cluster),
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
    drivers_.back()->set_finished_sink([this](const RequestRecord& record) {
      if (retrying_ && *retrying_ == record.id) return;
      if (measured(record.arrival)) metrics_.on_finished(record);
      if (series_) series_->on_finished(record);
    });
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

void ClusterSimulator::route_next_arrival() {
  const WorkloadItem item = arrivals_.take();
  ++requests_;
  const bool counted = measured(item.spec.arrival);
  if (counted) metrics_.on_arrival(item.spec.model, item.spec.slo_class);
  if (series_) series_->on_arrival(item.spec.arrival, item.spec.slo_class);
  size_t node = router_.pick(item.spec, schedulers_, now_);
  if (counted) ++first_choice_[node];
  // Each attempt goes to another node than the one that just rejected it, as long as the
  // rejection is one a balancer retries and attempts are left.
  for (int attempt = 0;; ++attempt) {
    NodeDriver& driver = *drivers_[node];
    const SubmitResult submitted = driver.submit(item, now_);
    std::optional<Reason> busy;
    if (!submitted.accepted) {
      for (const RequestRecord& record : driver.scheduler().effects().finished) {
        if (record.id == item.spec.id && balancer_retries(record.reason)) busy = record.reason;
      }
    }
    if (attempt > 0 && counted) {
      ++spillover_.retried;
      ++spillover_.retried_by_reason[static_cast<size_t>(*previous_rejection_)];
      ++retries_received_[node];
      ++(submitted.accepted ? spillover_.admitted_elsewhere : spillover_.rejected_again);
    }
    const std::optional<size_t> other = busy && cluster_.spillover && attempt < cluster_.retries
                                            ? router_.pick_other(item.spec, schedulers_, node, now_)
                                            : std::nullopt;
    if (!other) {
      driver.after_event(now_);
      if (busy && counted && attempt == 0) ++spillover_.not_retried;
      break;
    }
    // The rejection is not the request's outcome: the balancer sends it on.
    retrying_ = item.spec.id;
    driver.after_event(now_);
    retrying_.reset();
    previous_rejection_ = busy;
    node = *other;
  }
  arrivals_.schedule_next(now_, events_);
}

}  // namespace gangway
