// A request whose own prefill, alone on an idle engine, takes longer than its TTFT target can
// never succeed on a node like this one, so it is told "never" (deadline_never_meetable, no
// Retry-After, not retryable), apart from "not now" (deadline_unmeetable, Retry-After), which a
// router would retry for ever. Admission compares the target with the request's idle TTFT
// (AdmissionQuery::idle_ttft) as well as with its predicted TTFT.

#include <gtest/gtest.h>

#include <string>

#include "config/scenario.h"
#include "core/node_spec_for_tests.h"
#include "core/time_for_tests.h"
#include "sched/admission/admission_controller.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"

namespace gangway {
namespace {

using std::chrono::milliseconds;

RequestSpec interactive_request() {
  RequestSpec spec;
  spec.id = RequestId(1);
  spec.model = ModelId(0);
  spec.slo_class = SloClassId(0);
  spec.prompt_tokens = 5600;
  spec.max_tokens = 16;
  return spec;
}

TEST(Regression, APrefillLongerThanTheTargetOnAnIdleNodeIsNeverMeetable) {
  const NodeSpec node = node_with_default_classes();
  AdmissionController admission(node, AdmissionOptions{});
  AdmissionQuery query;
  query.predicted_ttft = milliseconds(320);
  query.idle_ttft = milliseconds(300);  // over the 200 ms target with nothing ahead
  const AdmissionVerdict never = admission.decide(interactive_request(), query, at_ms(0));
  EXPECT_FALSE(never.admit);
  EXPECT_EQ(never.reason, Reason::kDeadlineNeverMeetable);
  EXPECT_FALSE(never.retry_after.has_value());
  EXPECT_FALSE(retry_elsewhere(never.reason));
  EXPECT_STREQ(to_string(never.reason), "deadline_never_meetable");

  // Idle, it would make it: the miss is the queue's, so "not now" with a Retry-After.
  query.idle_ttft = milliseconds(150);
  const AdmissionVerdict not_now = admission.decide(interactive_request(), query, at_ms(10));
  EXPECT_FALSE(not_now.admit);
  EXPECT_EQ(not_now.reason, Reason::kDeadlineUnmeetable);
  EXPECT_TRUE(not_now.retry_after.has_value());
  EXPECT_TRUE(retry_elsewhere(not_now.reason));
}

// Through the scheduler on an idle node: 5,600 prompt tokens in chunks of 2,048 at 100 ms per
// iteration is 300 ms of prefill against the interactive class's 200 ms.
TEST(Regression, SchedulerRejectsANeverMeetableRequestOnAnIdleNodeAsSuch) {
  const Scenario scenario = parse_scenario(R"(
name: never-meetable
seed: 1
models:
  - name: small
    tier: small
    shape: llama-3-8b
    max_context_tokens: 8192
    max_batched_tokens: 2048
    cost: {model: constant, iteration_ms: 100}
workload:
  streams:
    - {name: s, model: small, class: interactive, arrival: {process: poisson, rate_per_s: 1},
       prompt_tokens: 64, output_tokens: 8}
)",
                                           "never-meetable.yaml");
  Scheduler scheduler(scenario.node, scenario.scheduler, make_policy(scenario.policy), nullptr);
  RequestSpec spec = interactive_request();
  spec.arrival = at_ms(0);
  scheduler.submit(spec, at_ms(0));
  const Effects& effects = scheduler.effects();
  ASSERT_EQ(effects.finished.size(), 1u);
  EXPECT_EQ(effects.finished[0].outcome, Outcome::kRejected);
  EXPECT_EQ(effects.finished[0].reason, Reason::kDeadlineNeverMeetable);

  // A short prompt on the same idle node is admitted.
  RequestSpec small = interactive_request();
  small.id = RequestId(2);
  small.prompt_tokens = 100;
  small.arrival = at_ms(1);
  EXPECT_TRUE(scheduler.submit(small, at_ms(1)).accepted);
}

}  // namespace
}  // namespace gangway
