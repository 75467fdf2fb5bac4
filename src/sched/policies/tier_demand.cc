#include "sched/policies/tier_demand.h"

#include <algorithm>
#include <cmath>

namespace gangway {

ShareLimits share_limits(const PolicySpec& spec) {
  ShareLimits limits;
  limits.large_min = spec.large_share_min;
  limits.large_max = spec.large_share_max;
  limits.large_weight = spec.large_weight;
  limits.small_weight = spec.small_weight;
  return limits;
}

namespace {

Duration scaled_by(Duration d, double factor) {
  return seconds_to_duration(to_seconds(d) * factor);
}

double clamp_share(double share) {
  return std::clamp(share, 0.0, 1.0);
}

}  // namespace

SharePlan plan_shares(const TierDemand& large, const TierDemand& small, const ShareLimits& limits) {
  SharePlan plan;
  plan.large = large;
  plan.small = small;
  plan.limits = limits;
  if (!large.any()) {
    plan.large_share = 0;
    return plan;
  }
  if (!small.any()) {
    plan.large_share = 1;
    return plan;
  }
  const double large_need = clamp_share(large.total());
  const double small_need = clamp_share(small.total());
  const double usable = 1.0 - limits.switch_overhead;
  const double large_weight = limits.large_weight / (limits.large_weight + limits.small_weight);
  double share = 0;
  const double spare = usable - large_need - small_need;
  if (spare >= 0) {
    share = large_need + spare * large_weight;
  } else {
    // Overload: the resident sequences' paces first (promises already made), in proportion if
    // they alone do not fit; the rest by the weights, a tier's part beyond its demand going to
    // the other.
    const double large_pace = clamp_share(large.pace);
    const double small_pace = clamp_share(small.pace);
    const double paces = large_pace + small_pace;
    if (paces >= usable) {
      share = usable * large_pace / paces;
    } else {
      const double rest = usable - paces;
      share = large_pace + rest * large_weight;
      const double small_share = small_pace + rest * (1.0 - large_weight);
      if (share > large_need) {
        share = large_need;
      } else if (small_share > small_need) {
        share += small_share - small_need;
      }
    }
  }
  plan.large_share = std::clamp(share, limits.large_min, limits.large_max);
  return plan;
}

}  // namespace gangway

namespace gangway {

namespace {

// The recent prefill rate is smoothed with this time constant.
constexpr double kRateTimeConstant_s = 1.0;

}  // namespace

void DemandModel::initialise(const SchedulerView& state, Duration no_target_deadline) {
  initialised_ = true;
  no_target_deadline_ = no_target_deadline;
  gpus_ = std::max<int>(1, static_cast<int>(state.gpus().size()));
  unpaced_ = unpaced_pace(state.node());
  seconds_per_prefill_token_.assign(state.node().models.size(), 0.0);
  for (const ModelSpec& model : state.node().models) {
    const CostModel* cost = model.is_large() ? (state.large() ? state.large()->cost : nullptr)
                                             : state.small_models()[model.id.value()].cost;
    if (cost != nullptr) {
      seconds_per_prefill_token_[model.id.value()] =
          lone_chunk_prefill_seconds_per_token(*cost, model);
    }
  }
}

std::optional<Duration> DemandModel::unpaced_pace(const NodeSpec& node) {
  std::optional<Duration> unpaced;
  for (const SloClass& slo : node.slo_classes) {
    if (slo.tpot_target) {
      unpaced = std::max(unpaced.value_or(Duration(0)), *slo.tpot_target * kUnpacedPaceFactor);
    }
  }
  return unpaced;
}

std::optional<Duration> DemandModel::pace(const SchedulerView& state, SloClassId slo_class,
                                          bool large) const {
  const SloClass& slo = state.node().slo_class(slo_class);
  if (slo.tpot_target) return slo.tpot_target;
  return large ? unpaced_ : std::nullopt;
}

Duration DemandModel::horizon(const SchedulerView& state, SloClassId slo_class) const {
  return state.node().slo_class(slo_class).ttft_target.value_or(no_target_deadline_);
}

Duration DemandModel::decode_time(const SchedulerView& state, ModelId model, int32_t batch,
                                  int64_t context) const {
  if (batch <= 0) return Duration(0);
  const CostModel* cost = state.node().model(model).is_large()
                              ? state.large()->cost
                              : state.small_models()[model.value()].cost;
  BatchShape shape;
  shape.decode_seqs = batch;
  shape.decode_context_tokens = context;
  return cost->iteration_time(shape);
}

TierDemand DemandModel::large(const SchedulerView& state, Time now) const {
  TierDemand demand;
  if (!state.large()) return demand;
  const LargeModelRuntime& large = *state.large();
  int64_t context = 0;
  int32_t resident = 0;
  int64_t resident_context = 0;
  for (SequenceHandle h : large.running) {
    const Sequence& seq = state.sequence(h);
    if (!seq.first_token) continue;
    ++resident;
    resident_context += seq.kv_tokens;
    const std::optional<Duration> period = pace(state, seq.spec.slo_class, true);
    if (!period) continue;
    ++demand.decoding;
    context += seq.kv_tokens;
    if (demand.period == Duration(0) || *period < demand.period) demand.period = *period;
  }
  demand.context = context;
  demand.resident_decode =
      scaled_by(decode_time(state, large.model, resident, resident_context), large.slowdown);
  if (demand.decoding > 0) {
    demand.decode_iteration =
        scaled_by(decode_time(state, large.model, demand.decoding, context), large.slowdown);
    demand.pace = to_seconds(demand.decode_iteration) / to_seconds(demand.period);
  }
  const double rate = seconds_per_prefill_token(large.model) * large.slowdown;
  double backlog = 0;
  Duration tightest = no_target_deadline_;
  for (const SloClass& slo : state.node().slo_classes) {
    const Duration within = horizon(state, slo.id);
    tightest = std::min(tightest, within);
    backlog += static_cast<double>(large.queue.queued_tokens(slo.id)) * rate / to_seconds(within);
  }
  backlog += static_cast<double>(large.resident_prefill_tokens) * rate / to_seconds(tightest);
  demand.prefill = std::min(1.0, std::max(backlog, recent_prefill(true, now)));
  return demand;
}

TierDemand DemandModel::small_pace(const SchedulerView& state, const GpuRuntime& gpu) const {
  TierDemand demand;
  Duration decode{0};
  for (uint32_t index : gpu.replicas) {
    const Replica& replica = state.replicas()[index];
    int32_t batch = 0;
    int64_t context = 0;
    for (SequenceHandle h : replica.running) {
      const Sequence& seq = state.sequence(h);
      if (!seq.first_token) continue;
      const std::optional<Duration> period = pace(state, seq.spec.slo_class, false);
      if (!period) continue;
      ++batch;
      context += seq.kv_tokens;
      if (demand.period == Duration(0) || *period < demand.period) demand.period = *period;
    }
    demand.decoding += batch;
    demand.context += context;
    decode += decode_time(state, replica.model, batch, context);
  }
  if (demand.decoding > 0) {
    demand.decode_iteration = scaled_by(decode, gpu.slowdown);
    demand.pace = to_seconds(demand.decode_iteration) / to_seconds(demand.period);
  }
  return demand;
}

double DemandModel::small_prefill(const SchedulerView& state, Time now) const {
  double busiest = 0;
  for (const GpuRuntime& gpu : state.gpus()) {
    if (gpu.failed) continue;
    double backlog = 0;
    for (uint32_t index : gpu.replicas) {
      const Replica& replica = state.replicas()[index];
      const SmallModelRuntime& model = state.small_models()[replica.model.value()];
      const double replicas = static_cast<double>(std::max<size_t>(1, model.replicas.size()));
      const double rate = seconds_per_prefill_token(replica.model) * gpu.slowdown;
      Duration tightest = no_target_deadline_;
      for (const SloClass& slo : state.node().slo_classes) {
        const Duration within = horizon(state, slo.id);
        tightest = std::min(tightest, within);
        const double tokens = static_cast<double>(replica.queue.queued_tokens(slo.id)) +
                              static_cast<double>(model.queue.queued_tokens(slo.id)) / replicas;
        backlog += tokens * rate / to_seconds(within);
      }
      backlog += static_cast<double>(replica.resident_prefill_tokens) * rate / to_seconds(tightest);
    }
    busiest = std::max(busiest, backlog);
  }
  return std::min(1.0, std::max(busiest, recent_prefill(false, now)));
}

void DemandModel::note_prefill(bool large, ModelId model, int32_t tokens, Time end) {
  if (tokens <= 0) return;
  Rate& rate = large ? large_rate_ : small_rate_;
  double work_s = tokens * seconds_per_prefill_token(model);
  if (!large) work_s /= gpus_;
  rate.value = decayed(rate, end) + work_s / kRateTimeConstant_s;
  rate.at = end;
}

double DemandModel::recent_prefill(bool large, Time now) const {
  return std::min(1.0, decayed(large ? large_rate_ : small_rate_, now));
}

double DemandModel::decayed(const Rate& rate, Time now) const {
  if (rate.value <= 0) return 0;
  const double age_s = now > rate.at ? to_seconds(now - rate.at) : 0.0;
  return rate.value * std::exp(-age_s / kRateTimeConstant_s);
}

void DemandSplit::initialise(const SchedulerView& state, Duration no_target_deadline) {
  demand_.initialise(state, no_target_deadline);
  small_pace_.assign(state.gpus().size(), std::nullopt);
}

const SharePlan& DemandSplit::plan(const SchedulerView& state, Time now) {
  const TierDemand large = demand_.large(state, now);
  TierDemand small;
  for (size_t gpu = 0; gpu < small_pace_.size(); ++gpu) {
    if (state.gpus()[gpu].failed) continue;
    if (!small_pace_[gpu]) small_pace_[gpu] = demand_.small_pace(state, state.gpus()[gpu]);
    if (small_pace_[gpu]->pace > small.pace) small = *small_pace_[gpu];
  }
  small.prefill = demand_.small_prefill(state, now);
  plan_ = plan_shares(large, small, limits_);
  return plan_;
}

void DemandSplit::on_iteration_finished(const IterationLaunch& launch, Time end) {
  if (!demand_.initialised()) return;
  if (recent_ == RecentPrefill::kCounted) {
    demand_.note_prefill(launch.engine.gang, launch.model, launch.shape.prefill_tokens, end);
  }
  if (!launch.engine.gang && launch.engine.gpu.value() < small_pace_.size()) {
    small_pace_[launch.engine.gpu.value()].reset();
  }
}

}  // namespace gangway
