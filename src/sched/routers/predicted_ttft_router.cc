// gangway's routing rule for small-model requests (docs/kv-and-routing.md, "Routing by predicted
// TTFT").
//
// Route: predict the request's TTFT on every replica of its model (TtftPredictor: wait there +
// load of host-cached blocks + prefill of the uncached part) and bind it to the smallest. That
// one comparison is the warm-busy versus cold-idle rule: a replica holding a fraction h of the
// prompt wins over an idle cold one exactly while its extra wait is below the prefill it saves
// (~ h x P). When no replica holds any of the prompt there is nothing to gain from choosing
// early, so the request stays in the model's shared queue (late binding: the first replica with
// room takes it, which is what a multi-server queue does best).
//
// Steal: a replica with nothing to run looks at the first few requests queued at each other
// replica of its model and takes the one that would start soonest here compared with there
// (its predicted TTFT there, counting the work queued ahead of it, minus its TTFT here), if any
// gains. A request bound for its cache but stuck behind a burst moves to the idle GPU when
// recomputing its prefix is cheaper than waiting: the least affinity loses it first.

#include <algorithm>

#include "sched/routers/router_factories.h"
#include "sched/ttft_predictor.h"

namespace gangway {

namespace {

// Requests looked at per other replica when stealing (the oldest ones, at the queue's front).
constexpr int kStealLookahead = 8;

class PredictedTtftRouter final : public Router {
 public:
  std::string_view name() const override { return "predicted-ttft"; }

  std::optional<uint32_t> route(const SchedulerView& state, const Sequence& seq,
                                Time now) override {
    if (!predictor_.initialised()) predictor_.initialise(state);
    const std::vector<uint32_t>& replicas = state.small_models()[seq.spec.model.value()].replicas;
    // Nothing cached anywhere (the common case for a fresh prompt: one probe per replica): late
    // binding, without estimating anything.
    bool any_cached = false;
    for (uint32_t index : replicas) {
      int32_t gpu_blocks = 0;
      int32_t host_blocks = 0;
      predictor_.cached_blocks(state, state.replicas()[index], seq, gpu_blocks, host_blocks);
      if (gpu_blocks + host_blocks > 0) {
        any_cached = true;
        break;
      }
    }
    if (!any_cached) return std::nullopt;
    std::optional<uint32_t> best;
    Duration best_ttft = Duration::max();
    for (uint32_t index : replicas) {
      const Replica& replica = state.replicas()[index];
      if (state.gpus()[replica.gpu.value()].failed) continue;
      const TtftEstimate estimate = predictor_.estimate(state, replica, seq, now);
      if (estimate.total() < best_ttft) {
        best = index;
        best_ttft = estimate.total();
      }
    }
    return best;
  }

  std::optional<SequenceHandle> steal(const SchedulerView& state, uint32_t idle,
                                      Time now) override {
    if (!predictor_.initialised()) predictor_.initialise(state);
    const Replica& here = state.replicas()[idle];
    std::optional<SequenceHandle> best;
    Duration best_gain{0};
    const Duration wait_here = predictor_.wait(state, here, 0, now);
    for (uint32_t index : state.small_models()[here.model.value()].replicas) {
      if (index == idle) continue;
      const Replica& there = state.replicas()[index];
      if (there.queue.empty()) continue;
      int64_t ahead = there.resident_prefill_tokens;
      int looked = 0;
      for (const auto& entry : there.queue) {
        if (++looked > kStealLookahead) break;
        const SequenceHandle handle = std::get<2>(entry);
        const Sequence& seq = state.sequence(handle);
        if (seq.swapped) {  // its KV belongs to that GPU's swap space: it goes back there
          ahead += seq.queue_tokens;
          continue;
        }
        const TtftEstimate at_there = predictor_.own_part(state, there, seq);
        const TtftEstimate at_here = predictor_.own_part(state, here, seq);
        const Duration ttft_there =
            predictor_.wait(state, there, ahead, now) + at_there.load + at_there.prefill;
        const Duration ttft_here = wait_here + at_here.load + at_here.prefill;
        const Duration gain = ttft_there - ttft_here;
        if (gain > best_gain) {
          best = handle;
          best_gain = gain;
        }
        ahead += seq.queue_tokens;
      }
    }
    return best;
  }

 private:
  TtftPredictor predictor_;
};

}  // namespace

std::unique_ptr<Router> make_predicted_ttft_router() {
  return std::make_unique<PredictedTtftRouter>();
}

}  // namespace gangway
