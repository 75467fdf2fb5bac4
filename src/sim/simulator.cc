#include "sim/simulator.h"

#include <algorithm>

namespace gangway {

namespace {

NodeDriverOptions driver_options(const SimulationOptions& options) {
  NodeDriverOptions driver;
  driver.warmup = options.warmup;
  driver.duration = options.duration;
  driver.timeline = options.timeline;
  driver.faults = options.faults;
  return driver;
}

}  // namespace

Simulator::Simulator(const NodeSpec& node, SchedulerOptions scheduler_options,
                     std::unique_ptr<GangPolicy> policy, std::unique_ptr<Router> router,
                     RequestSource& source, SimulationOptions options)
    : options_(options),
      arrivals_(source, Time::zero() + options_.duration),
      driver_(node, scheduler_options, std::move(policy), std::move(router), events_,
              driver_options(options)),
      cancellations_(options_.cancellations) {
  if (options_.series_bin > Duration(0)) series_.emplace(node, options_.series_bin);
  if (series_ || options_.observer) {
    driver_.set_finished_sink([this](const RequestRecord& record) {
      if (series_) series_->on_finished(record);
      if (options_.observer) options_.observer->on_finished(record);
    });
  }
  if (options_.observer) {
    driver_.set_iteration_sink(
        [this](uint64_t engine, Time now) { options_.observer->on_iteration_done(engine, now); });
  }
  if (options_.timeline) timeline_counters_.emplace(node, *options_.timeline);
}

Simulator::~Simulator() = default;

SimulationResult Simulator::run() {
  const Time window_end = Time::zero() + options_.duration;
  const Time hard_end = window_end + options_.drain_limit;
  arrivals_.schedule_next(now_, events_);
  driver_.schedule_faults();

  while (!events_.empty()) {
    const SimEvent event = events_.pop();
    if (event.time > hard_end) break;
    driver_.before_event(event.time);
    now_ = event.time;
    ++events_processed_;
    if (event.kind == SimEventKind::kArrival) {
      submit_next_arrival();
    } else {
      driver_.handle(event, now_);
    }
    driver_.after_event(now_);
    if (cancellations_.enabled()) cancel_due();
    if (options_.observer) options_.observer->after_event(now_);
    if (series_) {
      const SchedulerState& state = driver_.scheduler().state();
      series_->sample(now_, queued_requests(state), state.live_sequences);
      series_->sample_node(now_, driver_.scheduler());
    }
    if (timeline_counters_) timeline_counters_->sample(now_, driver_.scheduler());
    // Done once arrivals have stopped and nothing is left in the system.
    if (!arrivals_.pending() && driver_.scheduler().live_requests() == 0) break;
  }
  driver_.stop(now_);

  SimulationResult result{to_seconds(now_),
                          to_seconds(options_.duration - options_.warmup),
                          events_processed_,
                          requests_,
                          std::move(driver_.metrics()),
                          std::move(driver_.node_time()),
                          driver_.scheduler().state().gang.phases_started,
                          std::move(series_)};
  return result;
}

void Simulator::submit_next_arrival() {
  const WorkloadItem item = arrivals_.take();
  ++requests_;
  if (series_) series_->on_arrival(item.spec.arrival, item.spec.slo_class);
  const SubmitResult result = driver_.submit(item, now_);
  if (options_.observer) options_.observer->on_submitted(item, result, now_);
  cancellations_.on_submitted(item.spec, result, now_);
  arrivals_.schedule_next(now_, events_);
}

void Simulator::cancel_due() {
  due_.clear();
  cancellations_.due(driver_.scheduler(), now_, due_);
  for (const RequestId id : due_) {
    const std::optional<uint64_t> engine = driver_.engine_in_flight(id);
    driver_.cancel(id, now_);
    if (options_.observer) options_.observer->on_cancelled(id, engine, now_);
    driver_.after_event(now_);
  }
}

}  // namespace gangway
