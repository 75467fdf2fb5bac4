#include "sim/arrival_feed.h"

#include <algorithm>
#include <utility>

namespace gangway {

ArrivalFeed::ArrivalFeed(RequestSource& source, Time window_end)
    : source_(source), window_end_(window_end) {}

bool ArrivalFeed::schedule_next(Time now, EventQueue& events) {
  next_ = source_.next();
  if (!next_ || next_->spec.arrival >= window_end_) {
    next_.reset();
    return false;
  }
  events.push(std::max(now, next_->spec.arrival), SimEventKind::kArrival, 0);
  return true;
}

WorkloadItem ArrivalFeed::take() {
  WorkloadItem item = std::move(*next_);
  next_.reset();
  return item;
}

}  // namespace gangway
