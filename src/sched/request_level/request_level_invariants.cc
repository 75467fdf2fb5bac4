// RequestLevelCore::check_invariants(): what must hold after every event.
#include <stdexcept>
#include <string>
#include <vector>

#include "sched/request_level/request_level_core.h"

namespace gangway {
namespace {

void require(bool holds, const std::string& what) {
  if (!holds) throw std::logic_error("request-level invariant broken: " + what);
}

}  // namespace

void RequestLevelCore::check_invariants() const {
  // No lost request: each live request is in exactly one place, its model's queue or one
  // engine's running list, and the counters agree.
  size_t placed = 0;
  for (size_t m = 0; m < queues_.size(); ++m) {
    std::vector<int64_t> per_class(node_.slo_classes.size(), 0);
    for (const auto& [key, id] : queues_[m]) {
      const auto it = requests_.find(id.value());
      require(it != requests_.end(), "a queued request is not live");
      require(!it->second.engine, "a queued request is also dispatched");
      require(it->second.spec.model.value() == m, "a request is queued under another model");
      ++per_class[it->second.spec.slo_class.value()];
      ++placed;
    }
    require(per_class == class_queued_[m], "the per-class queue counts disagree with the queues");
  }
  std::vector<std::vector<int64_t>> running_by_class(
      class_running_.size(), std::vector<int64_t>(node_.slo_classes.size(), 0));
  int64_t small_running = 0;
  int64_t large_running = 0;
  bool small_unpaused = false;
  bool large_unpaused = false;
  for (size_t e = 0; e < engines_.size(); ++e) {
    const EngineSlot& engine = engines_[e];
    int64_t reserved = 0;
    for (const RequestId id : engine.running) {
      const auto it = requests_.find(id.value());
      require(it != requests_.end(), "an engine runs a request that is not live");
      require(it->second.engine && *it->second.engine == e,
              "an engine runs a request recorded elsewhere");
      reserved += it->second.reserved_tokens;
      ++running_by_class[it->second.spec.model.value()][it->second.spec.slo_class.value()];
      ++placed;
    }
    require(reserved == engine.reserved_tokens, "an engine's reserved tokens disagree");
    require(static_cast<int64_t>(engine.running.size()) <= engine.descriptor.max_num_seqs,
            "an engine runs more than max_num_seqs");
    require(engine.running.size() <= 1 || reserved <= engine.descriptor.kv_capacity_tokens,
            "an engine holds more KV than its capacity");
    require(engine.healthy || engine.running.empty(), "a failed engine still runs requests");
    (engine.descriptor.large ? large_running : small_running) +=
        static_cast<int64_t>(engine.running.size());
    // An engine counts as running from the moment its resume is asked for until its pause is
    // asked for (the engine then stops at its next step boundary).
    if (engine.healthy &&
        (engine.pause == EnginePause::kRunning || engine.pause == EnginePause::kResuming)) {
      (engine.descriptor.large ? large_unpaused : small_unpaused) = true;
    }
  }
  require(running_by_class == class_running_,
          "the per-class running counts disagree with the engines");
  require(placed == requests_.size(), "a live request is neither queued nor on an engine");
  // Tier exclusivity: lease mode never has both tiers' engines unpaused, exclusive mode never
  // runs both tiers' requests.
  if (options_.lease) {
    require(!(small_unpaused && large_unpaused),
            "engines of both tiers are unpaused at once (lease mode)");
  } else {
    require(small_running == 0 || large_running == 0,
            "requests of both tiers run at once (exclusive mode)");
  }
}

}  // namespace gangway
