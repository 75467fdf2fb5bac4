// The baseline routing rules gangway's predicted-TTFT routing is compared with
// (docs/kv-and-routing.md): round-robin, least-loaded, cache-only and an SGLang-router-like rule.
// They bind every request at arrival and never steal, as the routers they stand for do.

#include <algorithm>
#include <vector>

#include "sched/routers/router_factories.h"

namespace gangway {

std::optional<uint32_t> least_loaded_replica(const SchedulerView& state, const Sequence& seq) {
  std::optional<uint32_t> best;
  for (uint32_t index : state.small_models()[seq.spec.model.value()].replicas) {
    const Replica& replica = state.replicas()[index];
    if (state.gpus()[replica.gpu.value()].failed) continue;
    if (!best) {
      best = index;
      continue;
    }
    const Replica& incumbent = state.replicas()[*best];
    const int64_t load = outstanding_requests(replica);
    const int64_t incumbent_load = outstanding_requests(incumbent);
    if (load < incumbent_load ||
        (load == incumbent_load &&
         replica.queue.queued_tokens() + replica.resident_prefill_tokens <
             incumbent.queue.queued_tokens() + incumbent.resident_prefill_tokens)) {
      best = index;
    }
  }
  return best;
}

namespace {

// Longest cached prefix (GPU tier) of the request at a replica, in blocks.
int32_t gpu_match(const SchedulerView& state, const Replica& replica, const Sequence& seq) {
  const int32_t reusable = seq.reusable_prefix_blocks(state.node().kv_block_tokens);
  if (reusable <= 0 || !replica.kv.prefix_caching()) return 0;
  return replica.kv.match(
      std::span<const BlockHash>(seq.spec.prefix_blocks.data(), static_cast<size_t>(reusable)));
}

class RoundRobinRouter final : public Router {
 public:
  std::string_view name() const override { return "round-robin"; }
  std::optional<uint32_t> route(const SchedulerView& state, const Sequence& seq, Time) override {
    const std::vector<uint32_t>& replicas = state.small_models()[seq.spec.model.value()].replicas;
    if (next_.size() < state.small_models().size()) next_.resize(state.small_models().size(), 0);
    size_t& next = next_[seq.spec.model.value()];
    for (size_t tried = 0; tried < replicas.size(); ++tried) {
      const uint32_t index = replicas[next % replicas.size()];
      next = (next + 1) % replicas.size();
      if (!state.gpus()[state.replicas()[index].gpu.value()].failed) return index;
    }
    return std::nullopt;
  }

 private:
  std::vector<size_t> next_;  // by ModelId value
};

class LeastLoadedRouter final : public Router {
 public:
  std::string_view name() const override { return "least-loaded"; }
  std::optional<uint32_t> route(const SchedulerView& state, const Sequence& seq, Time) override {
    return least_loaded_replica(state, seq);
  }
};

class CacheOnlyRouter final : public Router {
 public:
  std::string_view name() const override { return "cache-only"; }
  std::optional<uint32_t> route(const SchedulerView& state, const Sequence& seq, Time) override {
    std::optional<uint32_t> best;
    int32_t best_match = 0;
    for (uint32_t index : state.small_models()[seq.spec.model.value()].replicas) {
      const Replica& replica = state.replicas()[index];
      if (state.gpus()[replica.gpu.value()].failed) continue;
      const int32_t match = gpu_match(state, replica, seq);
      if (match > best_match) {
        best = index;
        best_match = match;
      }
    }
    return best ? best : least_loaded_replica(state, seq);
  }
};

// SGLang's router, cache_aware policy, as documented for SGLang Model Gateway
// (docs/concepts/routing/cache-aware.md of lightseekorg/smg): the load is imbalanced when
// max - min > balance_abs_threshold and max > balance_rel_threshold x min (load = requests in
// flight per worker); then the least loaded worker takes the request. Otherwise the worker with
// the longest prefix match takes it if the match covers more than cache_threshold of the
// prompt, else the least loaded one. Defaults from that page: 64, 1.5, 0.3.
class SglangRouter final : public Router {
 public:
  static constexpr int64_t kBalanceAbsThreshold = 64;
  static constexpr double kBalanceRelThreshold = 1.5;
  static constexpr double kCacheThreshold = 0.3;

  std::string_view name() const override { return "sglang"; }
  std::optional<uint32_t> route(const SchedulerView& state, const Sequence& seq, Time) override {
    int64_t most = 0;
    int64_t least = -1;
    std::optional<uint32_t> best;
    int32_t best_match = -1;
    for (uint32_t index : state.small_models()[seq.spec.model.value()].replicas) {
      const Replica& replica = state.replicas()[index];
      if (state.gpus()[replica.gpu.value()].failed) continue;
      const int64_t load = outstanding_requests(replica);
      most = std::max(most, load);
      least = least < 0 ? load : std::min(least, load);
      const int32_t match = gpu_match(state, replica, seq);
      if (match > best_match) {
        best = index;
        best_match = match;
      }
    }
    if (!best) return std::nullopt;
    const bool imbalanced = most - least > kBalanceAbsThreshold &&
                            static_cast<double>(most) > kBalanceRelThreshold * least;
    const double match_ratio =
        static_cast<double>(best_match) * state.node().kv_block_tokens / seq.spec.prompt_tokens;
    if (imbalanced || match_ratio <= kCacheThreshold) return least_loaded_replica(state, seq);
    return best;
  }
};

}  // namespace

std::unique_ptr<Router> make_round_robin_router() {
  return std::make_unique<RoundRobinRouter>();
}
std::unique_ptr<Router> make_least_loaded_router() {
  return std::make_unique<LeastLoadedRouter>();
}
std::unique_ptr<Router> make_cache_only_router() {
  return std::make_unique<CacheOnlyRouter>();
}
std::unique_ptr<Router> make_sglang_router() {
  return std::make_unique<SglangRouter>();
}

}  // namespace gangway
