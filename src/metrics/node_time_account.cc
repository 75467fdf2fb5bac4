#include "metrics/node_time_account.h"

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace gangway {

namespace {

static_assert(static_cast<int>(GpuActivity::kFailed) + 1 == kGpuActivityCount,
              "kFailed must stay the last GpuActivity so that every activity has a slot");

constexpr std::array<GpuActivity, kGpuActivityCount> kAllActivities = {
    GpuActivity::kRunningSmall,     GpuActivity::kRunningLarge, GpuActivity::kGangBarrier,
    GpuActivity::kIdleWhileWaiting, GpuActivity::kIdle,         GpuActivity::kFailed,
};

std::size_t index_of(GpuActivity activity) {
  return static_cast<std::size_t>(activity);
}

// The fraction keys for one set of per-activity durations (one GPU's or the node's), over
// `denominator_ns` of GPU-time. Null fractions when no time has elapsed.
void put_fractions(nlohmann::json& out, const std::array<int64_t, kGpuActivityCount>& ns,
                   int64_t denominator_ns) {
  const auto fraction = [&](int64_t part_ns, int64_t whole_ns) -> nlohmann::json {
    if (whole_ns <= 0) return nullptr;
    return static_cast<double>(part_ns) / static_cast<double>(whole_ns);
  };
  const int64_t small = ns[index_of(GpuActivity::kRunningSmall)];
  const int64_t large = ns[index_of(GpuActivity::kRunningLarge)];
  const int64_t barrier = ns[index_of(GpuActivity::kGangBarrier)];
  const int64_t idle_waiting = ns[index_of(GpuActivity::kIdleWhileWaiting)];
  const int64_t failed = ns[index_of(GpuActivity::kFailed)];
  out["gpu_utilization"] = fraction(small + large, denominator_ns - failed);
  out["sm_busy_fraction"] = fraction(small, denominator_ns);
  out["lm_busy_fraction"] = fraction(large, denominator_ns);
  out["gang_barrier_fraction"] = fraction(barrier, denominator_ns);
  out["idle_while_waiting_fraction"] = fraction(idle_waiting, denominator_ns);
  out["idle_fraction"] = fraction(ns[index_of(GpuActivity::kIdle)], denominator_ns);
  out["failed_fraction"] = fraction(failed, denominator_ns);
  out["lost_fraction"] = fraction(barrier + idle_waiting, denominator_ns);
}

}  // namespace

NodeTimeAccount::NodeTimeAccount(int gpu_count, Time start) : start_(start), last_observed_(start) {
  if (gpu_count < 1) {
    throw std::invalid_argument("NodeTimeAccount: gpu_count must be at least 1, got " +
                                std::to_string(gpu_count));
  }
  current_.assign(static_cast<std::size_t>(gpu_count), GpuActivity::kIdle);
  ns_by_gpu_activity_.assign(static_cast<std::size_t>(gpu_count) * kGpuActivityCount, 0);
}

void NodeTimeAccount::throw_wrong_gpu_count(std::size_t given) const {
  throw std::invalid_argument("NodeTimeAccount::observe: " + std::to_string(given) +
                              " activities for " + std::to_string(current_.size()) + " GPUs");
}

void NodeTimeAccount::throw_time_went_back(Time now) const {
  throw std::logic_error("NodeTimeAccount: time went back from " +
                         std::to_string(last_observed_.ns()) + " ns to " +
                         std::to_string(now.ns()) + " ns");
}

std::size_t NodeTimeAccount::checked_gpu(GpuId gpu) const {
  const std::size_t index = gpu.value();
  if (index >= current_.size()) {
    throw std::out_of_range("NodeTimeAccount: no GPU " + std::to_string(index));
  }
  return index;
}

GpuActivity NodeTimeAccount::current(GpuId gpu) const {
  return current_[checked_gpu(gpu)];
}

Duration NodeTimeAccount::duration(GpuId gpu, GpuActivity activity) const {
  return Duration(ns_by_gpu_activity_[checked_gpu(gpu) * kGpuActivityCount + index_of(activity)]);
}

Duration NodeTimeAccount::total_duration(GpuActivity activity) const {
  int64_t total_ns = 0;
  for (std::size_t gpu = 0; gpu < current_.size(); ++gpu) {
    total_ns += ns_by_gpu_activity_[gpu * kGpuActivityCount + index_of(activity)];
  }
  return Duration(total_ns);
}

nlohmann::json NodeTimeAccount::to_json() const {
  const int64_t elapsed_ns = elapsed().count();
  const int64_t gpu_time_ns = elapsed_ns * static_cast<int64_t>(current_.size());

  std::array<int64_t, kGpuActivityCount> node_ns{};
  nlohmann::json per_gpu = nlohmann::json::array();
  for (std::size_t gpu = 0; gpu < current_.size(); ++gpu) {
    std::array<int64_t, kGpuActivityCount> gpu_ns{};
    for (std::size_t a = 0; a < gpu_ns.size(); ++a) {
      gpu_ns[a] = ns_by_gpu_activity_[gpu * kGpuActivityCount + a];
      node_ns[a] += gpu_ns[a];
    }
    nlohmann::json entry = {{"gpu", gpu}};
    put_fractions(entry, gpu_ns, elapsed_ns);
    per_gpu.push_back(std::move(entry));
  }

  nlohmann::json seconds = nlohmann::json::object();
  for (GpuActivity activity : kAllActivities) {
    seconds[to_string(activity)] = to_seconds(Duration(node_ns[index_of(activity)]));
  }
  nlohmann::json out = {
      {"gpu_count", current_.size()},
      {"elapsed_s", to_seconds(elapsed())},
      {"gpu_seconds", to_seconds(Duration(gpu_time_ns))},
  };
  put_fractions(out, node_ns, gpu_time_ns);
  out["seconds"] = std::move(seconds);
  out["per_gpu"] = std::move(per_gpu);
  return out;
}

}  // namespace gangway
