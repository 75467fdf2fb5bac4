// The deadline clocks gangway's decisions compare (sched/policies/tier_urgency.h), read by a
// policy that never starts the gang, on a node whose iterations all take 10 ms: a queued large
// request must get the gang by its first-token deadline less its prompt's chunks and the urgency
// margin, and is left out once that latest start has passed; a resident small sequence part-way
// through its prompt must resume by its deadline less its remaining chunks at its GPU's last
// iteration time and the margin; with no small work the small models' clock never runs out.

#include "sched/policies/tier_urgency.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "core/time_for_tests.h"
#include "sched/scheduler.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

constexpr Duration kMargin = milliseconds(40);

// Keeps the clocks up to date as gangway does, and never starts the gang (its large work stays
// queued); asks to be woken every second so that waiting work never looks stalled.
class ClockReader final : public GangPolicy {
 public:
  std::string_view name() const override { return "clock-reader"; }
  ExecutionMode mode() const override { return ExecutionMode::kLease; }
  void plan(const SchedulerView& state, Time) override {
    if (initialised_) return;
    initialised_ = true;
    urgency.initialise(state);
  }
  bool want_gang(const SchedulerView&, Time) override { return false; }
  bool keep_gang(const SchedulerView&, Time) override { return false; }
  Time next_wakeup(const SchedulerView&, Time now) const override {
    return now + std::chrono::seconds(1);
  }
  void on_iteration_finished(const SchedulerView& state, const IterationLaunch& launch,
                             Time end) override {
    if (!launch.engine.gang)
      urgency.on_small_iteration(state, launch.engine.gpu, end - launch.start);
  }

  TierUrgency urgency{ExecutionMode::kLease, kMargin};

 private:
  bool initialised_ = false;
};

NodeSpec constant_node() {
  NodeSpec node = default_node_spec();
  for (ModelSpec& model : node.models) {
    model.cost.kind = CostModelKind::kConstant;
    model.cost.constant_iteration_s = 0.010;
  }
  return node;
}

RequestSpec interactive(uint64_t id, ModelId model, int prompt, Time arrival) {
  RequestSpec spec;
  spec.id = RequestId(id);
  spec.model = model;
  spec.slo_class = SloClassId(0);  // interactive: TTFT 200 ms, TPOT 50 ms
  spec.arrival = arrival;
  spec.prompt_tokens = prompt;
  spec.max_tokens = 8;
  return spec;
}

struct Probe {
  explicit Probe(const NodeSpec& node) {
    auto policy = std::make_unique<ClockReader>();
    reader = policy.get();
    scheduler = std::make_unique<Scheduler>(node, SchedulerOptions{}, std::move(policy), nullptr);
  }
  SchedulerView view() const { return scheduler->state(); }
  const TierUrgency& urgency() const { return reader->urgency; }

  ClockReader* reader = nullptr;
  std::unique_ptr<Scheduler> scheduler;
};

TEST(TierUrgency, AQueuedLargeRequestIsDueItsPromptsChunksAndTheMarginBeforeItsDeadline) {
  const NodeSpec node = constant_node();
  Probe probe(node);
  // 1000 prompt tokens: two of the large model's 512-token chunks.
  ASSERT_TRUE(
      probe.scheduler->submit(interactive(1, ModelId(1), 1000, at_ms(0)), at_ms(0)).accepted);
  EXPECT_EQ(probe.urgency().large_chunk_time(), milliseconds(10));
  const Time latest_start = at_ms(200) - 2 * milliseconds(10) - kMargin;
  EXPECT_EQ(probe.urgency().large_first_token_urgency(probe.view()), latest_start);
  EXPECT_EQ(probe.urgency().earliest_large_urgency(probe.view()), latest_start);
  // Asked for only the requests a gang starting later can still save, it is left out.
  EXPECT_EQ(probe.urgency().large_first_token_urgency(probe.view(), latest_start), latest_start);
  EXPECT_EQ(probe.urgency().large_first_token_urgency(probe.view(), latest_start + milliseconds(1)),
            Time::max());
  // Nothing decodes yet, and the small models have no work.
  EXPECT_EQ(probe.urgency().large_decode_urgency(probe.view()), Time::max());
  EXPECT_EQ(probe.urgency().earliest_small_urgency(probe.view()), Time::max());
  EXPECT_EQ(probe.urgency().longest_small_step(), Duration(0));
}

TEST(TierUrgency, AResidentSmallPromptIsDueItsRemainingChunksAndTheMarginBeforeItsDeadline) {
  const NodeSpec node = constant_node();
  Probe probe(node);
  // The large request keeps the large model's work pending, so the small models' clock is
  // renewed as each of their iterations ends.
  ASSERT_TRUE(
      probe.scheduler->submit(interactive(1, ModelId(1), 100, at_ms(0)), at_ms(0)).accepted);
  ASSERT_TRUE(
      probe.scheduler->submit(interactive(2, ModelId(0), 2000, at_ms(0)), at_ms(0)).accepted);
  const SchedulerView view = probe.view();
  std::optional<SequenceHandle> small;
  GpuId gpu;
  for (const GpuRuntime& g : view.gpus()) {
    for (uint32_t index : g.replicas) {
      for (SequenceHandle h : view.replicas()[index].running) {
        small = h;
        gpu = g.id;
      }
    }
  }
  ASSERT_TRUE(small) << "the small request starts at once on an idle GPU";
  probe.scheduler->on_iteration_done(EngineRef::small(gpu), {}, at_ms(10));
  const int64_t remaining = probe.view().sequence(*small).remaining_prefill_tokens();
  ASSERT_GT(remaining, 0);
  const int64_t chunk = node.models[0].prefill_chunk_tokens;
  const int64_t chunks = (remaining + chunk - 1) / chunk;
  EXPECT_EQ(probe.urgency().earliest_small_urgency(probe.view()),
            at_ms(200) - chunks * milliseconds(10) - kMargin);
  EXPECT_EQ(probe.urgency().longest_small_step(), milliseconds(10));
}

}  // namespace
}  // namespace gangway
