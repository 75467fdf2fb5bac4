#include "sim/fluid_bound.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <unordered_set>

#include "model/cost_model.h"

namespace gangway {

namespace {

// Lagrange multipliers between the prefill (compute) and decode (memory) constraints, and the
// LM's share of the node, on fixed grids: the bound is the best grid point, which is still a
// bound (each grid point's value is one).
constexpr double kMultipliers[] = {0.0, 0.25, 0.5, 0.75, 1.0};
constexpr int kShareSteps = 200;

enum Tier : uint8_t { kLarge = 0, kSmall = 1 };

struct Item {
  uint16_t model = 0;
  uint8_t slo_class = 0;
  uint16_t group = 0;     // (model, class) pair, for the pace thresholds
  bool targeted = false;  // its class has a TPOT target and it decodes
  int32_t prefill_tokens = 0;
  int32_t decode_tokens = 0;
  int64_t context = 0;  // mean context while decoding
};

struct Group {
  uint16_t model = 0;
  Duration tpot{0};
  double context_sum = 0;
  int64_t items = 0;
};

Duration decode_iteration(const CostModel& cost, int32_t batch, int64_t context) {
  BatchShape shape;
  shape.decode_seqs = batch;
  shape.decode_context_tokens = static_cast<int64_t>(batch) * context;
  return cost.iteration_time(shape);
}

// Marginal seconds per prompt token in a large chunk: the compute-bound rate no schedule beats.
double prefill_seconds_per_token(const CostModel& cost, const ModelSpec& model) {
  const int32_t chunk = std::max(model.prefill_chunk_tokens, model.max_batched_tokens);
  auto time = [&](int32_t tokens) {
    BatchShape shape;
    shape.prefill_tokens = tokens;
    shape.prefill_seqs = 1;
    return to_seconds(cost.iteration_time(shape));
  };
  return std::max(0.0, (time(2 * chunk) - time(chunk)) / chunk);
}

std::vector<int32_t> batch_grid(int32_t most) {
  std::vector<int32_t> grid;
  for (int32_t b = 1; b < most; b *= 2) grid.push_back(b);
  grid.push_back(std::max(1, most));
  return grid;
}

// One tier's work, its cost terms per batch size, and the count of requests a budget serves.
class TierBound {
 public:
  TierBound(std::vector<Item> items, std::vector<Group> groups, std::vector<int32_t> batches,
            const std::vector<const CostModel*>& costs, const std::vector<double>& prefill_rates)
      : items_(std::move(items)), groups_(std::move(groups)), batches_(std::move(batches)) {
    prefill_s_.resize(items_.size());
    for (size_t i = 0; i < items_.size(); ++i) {
      prefill_s_[i] = items_[i].prefill_tokens * prefill_rates[items_[i].model];
    }
    decode_s_.assign(batches_.size(), std::vector<double>(items_.size(), 0.0));
    thresholds_.assign(batches_.size(), std::vector<double>(groups_.size(), 0.0));
    for (size_t b = 0; b < batches_.size(); ++b) {
      const int32_t batch = batches_[b];
      for (size_t i = 0; i < items_.size(); ++i) {
        const Item& item = items_[i];
        if (item.decode_tokens == 0) continue;
        const double per_token =
            to_seconds(decode_iteration(*costs[item.model], batch, item.context)) / batch;
        decode_s_[b][i] = per_token * item.decode_tokens;
      }
      for (size_t g = 0; g < groups_.size(); ++g) {
        const Group& group = groups_[g];
        const auto context =
            static_cast<int64_t>(group.context_sum / std::max<int64_t>(1, group.items));
        thresholds_[b][g] = to_seconds(decode_iteration(*costs[group.model], batch, context)) /
                            to_seconds(group.tpot);
      }
    }
  }

  size_t batch_count() const { return batches_.size(); }
  int32_t batch(size_t b) const { return batches_[b]; }
  bool empty() const { return items_.empty(); }

  // Requests served on time (fractional) with `share` of the time and `budget_s` seconds of
  // GPU-time, at batch size index b under multiplier m: the cheapest first, of those that can
  // keep pace at that share.
  // Fills counts[b][m][step] for every share step (share of this tier = share_of(step)).
  template <typename ShareOf>
  void evaluate(std::vector<std::vector<std::vector<double>>>& counts, ShareOf share_of,
                double budget_per_share) const {
    counts.assign(batches_.size(),
                  std::vector<std::vector<double>>(std::size(kMultipliers),
                                                   std::vector<double>(kShareSteps + 1, 0.0)));
    std::vector<size_t> order(items_.size());
    std::vector<double> cost(items_.size());
    std::vector<double> cumulative;
    for (size_t b = 0; b < batches_.size(); ++b) {
      for (size_t m = 0; m < std::size(kMultipliers); ++m) {
        const double mu = kMultipliers[m];
        for (size_t i = 0; i < items_.size(); ++i) {
          cost[i] = mu * prefill_s_[i] + (1.0 - mu) * decode_s_[b][i];
        }
        std::iota(order.begin(), order.end(), size_t{0});
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t x, size_t y) { return cost[x] < cost[y]; });
        // The pace thresholds split the shares into levels; within one level the same
        // requests can keep pace.
        double last_threshold = -1;
        for (int step = 0; step <= kShareSteps; ++step) {
          const double share = share_of(step);
          if (share <= 0) continue;
          double threshold = -1;  // the largest group threshold within reach
          for (double t : thresholds_[b]) {
            if (t <= share) threshold = std::max(threshold, t);
          }
          if (cumulative.empty() || threshold != last_threshold) {
            cumulative.clear();
            for (size_t index : order) {
              const Item& item = items_[index];
              if (item.targeted && thresholds_[b][item.group] > share) continue;
              cumulative.push_back((cumulative.empty() ? 0.0 : cumulative.back()) + cost[index]);
            }
            last_threshold = threshold;
          }
          counts[b][m][step] = served(cumulative, budget_per_share * share);
        }
        cumulative.clear();
      }
    }
  }

  // Requests of each model and class served at batch index b, multiplier m, share and budget.
  void served_by(size_t b, size_t m, double share, double budget_s, std::vector<double>& by_model,
                 std::vector<double>& by_class) const {
    const double mu = kMultipliers[m];
    std::vector<size_t> order;
    std::vector<double> cost(items_.size());
    for (size_t i = 0; i < items_.size(); ++i) {
      cost[i] = mu * prefill_s_[i] + (1.0 - mu) * decode_s_[b][i];
      if (items_[i].targeted && thresholds_[b][items_[i].group] > share) continue;
      order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return cost[x] < cost[y]; });
    double used = 0;
    for (size_t index : order) {
      if (used + cost[index] > budget_s) break;
      used += cost[index];
      by_model[items_[index].model] += 1;
      by_class[items_[index].slo_class] += 1;
    }
  }

 private:
  static double served(const std::vector<double>& cumulative, double budget) {
    if (cumulative.empty()) return 0;
    const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), budget);
    const auto whole = static_cast<size_t>(it - cumulative.begin());
    if (whole == cumulative.size()) return static_cast<double>(whole);
    const double before = whole == 0 ? 0.0 : cumulative[whole - 1];
    const double next = cumulative[whole] - before;
    return static_cast<double>(whole) + (next > 0 ? (budget - before) / next : 0.0);
  }

  std::vector<Item> items_;
  std::vector<Group> groups_;
  std::vector<int32_t> batches_;
  std::vector<double> prefill_s_;                // by item
  std::vector<std::vector<double>> decode_s_;    // by batch index, item
  std::vector<std::vector<double>> thresholds_;  // by batch index, group: least share for pace
};

}  // namespace

FluidBound compute_fluid_bound(const NodeSpec& node, RequestSource& source, Time window_start,
                               Time window_end) {
  FluidBound bound;
  bound.window_s = to_seconds(window_end - window_start);
  const size_t models = node.models.size();
  const size_t classes = node.slo_classes.size();
  bound.model_offered_rps.assign(models, 0.0);
  bound.model_goodput_rps.assign(models, 0.0);
  bound.class_offered_rps.assign(classes, 0.0);
  bound.class_goodput_rps.assign(classes, 0.0);
  if (!(bound.window_s > 0)) return bound;

  std::vector<std::unique_ptr<CostModel>> owned;
  std::vector<const CostModel*> costs;
  std::vector<double> prefill_rates;
  for (const ModelSpec& model : node.models) {
    owned.push_back(make_cost_model(model, node.hardware));
    costs.push_back(owned.back().get());
    prefill_rates.push_back(prefill_seconds_per_token(*owned.back(), model));
  }
  std::vector<std::unordered_set<BlockHash>> seen(models);
  std::vector<Item> items[2];
  std::vector<Group> groups[2];
  std::vector<int> group_of(models * classes, -1);
  double feasible = 0;
  double offered = 0;
  while (const std::optional<Time> arrival = source.peek_arrival()) {
    if (*arrival >= window_end) break;
    const std::optional<WorkloadItem> next = source.next();
    if (!next) break;
    const RequestSpec& spec = next->spec;
    if (spec.model.value() >= models || spec.slo_class.value() >= classes) continue;
    const ModelSpec& model = node.model(spec.model);
    // The unbounded cache: the leading blocks any earlier request of the model computed.
    std::unordered_set<BlockHash>& cache = seen[spec.model.value()];
    int32_t cached_blocks = 0;
    while (cached_blocks < static_cast<int32_t>(spec.prefix_blocks.size()) &&
           cache.count(spec.prefix_blocks[static_cast<size_t>(cached_blocks)]) > 0) {
      ++cached_blocks;
    }
    cache.insert(spec.prefix_blocks.begin(), spec.prefix_blocks.end());
    if (*arrival < window_start) continue;
    offered += 1;
    bound.model_offered_rps[spec.model.value()] += 1;
    bound.class_offered_rps[spec.slo_class.value()] += 1;
    const SloClass& slo = node.slo_class(spec.slo_class);
    const int32_t cached =
        std::min(cached_blocks * node.kv_block_tokens, std::max(0, spec.prompt_tokens - 1));
    Item item;
    item.model = spec.model.value();
    item.slo_class = spec.slo_class.value();
    item.prefill_tokens = spec.prompt_tokens - cached;
    item.decode_tokens = std::max(0, next->output_tokens - 1);
    item.context = spec.prompt_tokens + next->output_tokens / 2;
    std::optional<Duration> ttft = slo.ttft_target;
    if (spec.ttft_deadline) {
      const Duration own = *spec.ttft_deadline - spec.arrival;
      ttft = ttft ? std::min(*ttft, own) : own;
    }
    if (ttft && prefill_time(*costs[item.model], model, item.prefill_tokens, cached) > *ttft) {
      continue;  // its prefill alone is late: never on time
    }
    feasible += 1;
    const Tier tier = model.is_large() ? kLarge : kSmall;
    item.targeted = slo.tpot_target.has_value() && item.decode_tokens > 0;
    if (item.targeted) {
      int& group = group_of[item.model * classes + item.slo_class];
      if (group < 0) {
        group = static_cast<int>(groups[tier].size());
        Group fresh;
        fresh.model = item.model;
        fresh.tpot = *slo.tpot_target;
        groups[tier].push_back(fresh);
      }
      item.group = static_cast<uint16_t>(group);
      groups[tier][static_cast<size_t>(group)].context_sum += static_cast<double>(item.context);
      ++groups[tier][static_cast<size_t>(group)].items;
    }
    items[tier].push_back(item);
  }
  bound.offered_rps = offered / bound.window_s;
  bound.feasible_rps = feasible / bound.window_s;
  for (double& rate : bound.model_offered_rps) rate /= bound.window_s;
  for (double& rate : bound.class_offered_rps) rate /= bound.window_s;

  // Small-model GPUs: every GPU holding a replica; the LM's batch limit is its own.
  std::vector<bool> small_gpu(static_cast<size_t>(node.gpu_count), false);
  int32_t small_most = 1;
  int32_t large_most = 1;
  for (const ModelSpec& model : node.models) {
    if (model.is_large()) {
      large_most = model.max_num_seqs;
      continue;
    }
    small_most = std::max(small_most, model.max_num_seqs);
    for (GpuId gpu : model.gpus) {
      if (gpu.value() < small_gpu.size()) small_gpu[gpu.value()] = true;
    }
  }
  const auto small_gpus = static_cast<double>(std::count(small_gpu.begin(), small_gpu.end(), true));
  const TierBound large(std::move(items[kLarge]), std::move(groups[kLarge]), batch_grid(large_most),
                        costs, prefill_rates);
  const TierBound small(std::move(items[kSmall]), std::move(groups[kSmall]), batch_grid(small_most),
                        costs, prefill_rates);
  auto large_share = [](int step) { return static_cast<double>(step) / kShareSteps; };
  auto small_share = [](int step) { return 1.0 - static_cast<double>(step) / kShareSteps; };
  std::vector<std::vector<std::vector<double>>> large_counts;
  std::vector<std::vector<std::vector<double>>> small_counts;
  large.evaluate(large_counts, large_share, bound.window_s);
  small.evaluate(small_counts, small_share, bound.window_s * small_gpus);

  // Per share: each tier's best batch size of its least multiplier's count.
  auto tier_best = [](const std::vector<std::vector<std::vector<double>>>& counts, int step,
                      size_t& best_batch, size_t& best_multiplier) {
    double best = 0;
    best_batch = 0;
    best_multiplier = 0;
    for (size_t b = 0; b < counts.size(); ++b) {
      size_t argmin = 0;
      for (size_t m = 1; m < counts[b].size(); ++m) {
        if (counts[b][m][step] < counts[b][argmin][step]) argmin = m;
      }
      if (counts[b][argmin][step] > best) {
        best = counts[b][argmin][step];
        best_batch = b;
        best_multiplier = argmin;
      }
    }
    return best;
  };
  double best_total = -1;
  int best_step = 0;
  for (int step = 0; step <= kShareSteps; ++step) {
    size_t b = 0;
    size_t m = 0;
    const double total = tier_best(large_counts, step, b, m) + tier_best(small_counts, step, b, m);
    if (total > best_total) {
      best_total = total;
      best_step = step;
    }
  }
  bound.goodput_rps = std::max(0.0, best_total) / bound.window_s;
  bound.large_share = large_share(best_step);
  size_t large_batch = 0;
  size_t large_multiplier = 0;
  size_t small_batch = 0;
  size_t small_multiplier = 0;
  tier_best(large_counts, best_step, large_batch, large_multiplier);
  tier_best(small_counts, best_step, small_batch, small_multiplier);
  bound.large_batch = large.empty() ? 0 : large.batch(large_batch);
  bound.small_batch = small.empty() ? 0 : small.batch(small_batch);
  if (!large.empty() && bound.large_share > 0) {
    large.served_by(large_batch, large_multiplier, bound.large_share,
                    bound.window_s * bound.large_share, bound.model_goodput_rps,
                    bound.class_goodput_rps);
  }
  if (!small.empty() && bound.large_share < 1) {
    small.served_by(small_batch, small_multiplier, 1.0 - bound.large_share,
                    bound.window_s * small_gpus * (1.0 - bound.large_share),
                    bound.model_goodput_rps, bound.class_goodput_rps);
  }
  for (double& rate : bound.model_goodput_rps) rate /= bound.window_s;
  for (double& rate : bound.class_goodput_rps) rate /= bound.window_s;
  return bound;
}

}  // namespace gangway
