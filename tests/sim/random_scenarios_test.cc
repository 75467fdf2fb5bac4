// Random scenarios crossing the settings that change the scheduler's decision paths: every gang
// policy in both modes on two nodes (peak-mixed's, and one with a second small model sharing two
// GPUs), every routing rule, loads from a fifth to nearly twice capacity at any LM share,
// batching limits, the gang knobs, admission on and off in both queue orders, static and dynamic
// KV splits with every preemption policy, prefix caching on host memory or not, predicted or
// oracle output lengths, and injected faults; and the workload and admission around them: arrival
// processes (bursty, on-off, ramps), shared system prompts and multi-turn sessions (which give the
// prefix caches and cache-aware routing hits to find), small max_tokens caps, SLO targets and what
// admission does on a predicted miss, the overload ladder's thresholds, queue caps and rate
// limits. The other tests vary one of these at a time around
// the defaults; the guarantees that hold for every combination (nothing deadlocks, every request
// that arrived ends with exactly one outcome, the invariants hold after every event, which test
// builds check) are checked here on the combinations. Most trials also have clients that cancel
// (sim/client_cancellations.h: queued, prefilling, decoding, during a gang phase, while swapped,
// a streaming client that disconnects after some tokens, after a delay), and every trial is
// checked after every event against a reference model of request outcomes
// (request_outcome_model.h). A failing trial prints its settings and the command that replays
// it alone. CI runs kTrials of them; GANGWAY_RANDOM_TRIALS=N in the environment searches wider
// (about 190 s per 1,000 in the invariant build), GANGWAY_RANDOM_FIRST_TRIAL=K starts the search
// at trial K (two processes can search apart). It found three stalls (tests/regressions/).

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "config/scenario_source.h"
#include "request_outcome_model.h"
#include "scenario_runs.h"
#include "sched/policy_registry.h"
#include "sched/router_registry.h"
#include "sim/cluster_simulator.h"
#include "sim/simulator.h"
#include "workload/rng.h"

namespace gangway {
namespace {

constexpr int kTrials = 48;
// Cluster trials run several nodes each: fewer of them.
constexpr int kClusterTrials = 8;

double between(Rng& rng, double low, double high) {
  return low + (high - low) * rng.uniform01();
}

Duration milliseconds_between(Rng& rng, double low, double high) {
  return seconds_to_duration(between(rng, low, high) / 1000);
}

bool coin(Rng& rng, double p = 0.5) {
  return rng.uniform01() < p;
}

// Arrival processes, shared prompts, sessions and output caps of every stream (rates keep their
// means: the load stays what the trial drew).
void randomise_workload(Rng& rng, Scenario& scenario, std::ostringstream& said) {
  int bursty = 0;
  int prefixed = 0;
  int chatty = 0;
  for (StreamSpec& stream : scenario.streams) {
    ArrivalSpec& arrival = stream.arrival;
    const double rate = arrival.rate_per_s;
    switch (rng.uniform_int(4)) {
      case 1:
        arrival.kind = ArrivalSpec::Kind::gamma;
        arrival.cv = between(rng, 0, 4);
        ++bursty;
        break;
      case 2:
        arrival.kind = ArrivalSpec::Kind::on_off;
        arrival.on_rate_per_s = rate * between(rng, 1.2, 4);
        arrival.off_rate_per_s = rate * between(rng, 0, 0.5);
        arrival.on_s = between(rng, 0.05, 1.5);
        arrival.off_s = between(rng, 0.05, 1.5);
        ++bursty;
        break;
      case 3:
        arrival.kind = ArrivalSpec::Kind::ramp;
        arrival.start_rate_per_s = rate * between(rng, 0, 1);
        arrival.end_rate_per_s = rate * between(rng, 0.5, 2);
        arrival.ramp_s = between(rng, 0.2, 4);
        ++bursty;
        break;
      default:
        break;
    }
    if (coin(rng, 0.35)) {
      PrefixSpec prefix;
      prefix.groups = 1 + static_cast<int32_t>(rng.uniform_int(20));
      prefix.group_tokens = 1 + static_cast<int32_t>(rng.uniform_int(1024));
      prefix.zipf_s = between(rng, 0, 1.5);
      if (coin(rng)) prefix.pool = "shared";
      stream.prefix = prefix;
      ++prefixed;
    }
    if (coin(rng, 0.25)) {
      SessionSpec sessions;
      sessions.new_session_probability = between(rng, 0.1, 1);
      sessions.think_time_s = between(rng, 0, 2);
      sessions.max_active_sessions = static_cast<int32_t>(rng.uniform_int(1000));
      stream.sessions = sessions;
      stream.max_prompt_tokens = 256 + static_cast<int32_t>(rng.uniform_int(16000));
      ++chatty;
    }
    if (coin(rng, 0.2)) stream.max_tokens = 1 + static_cast<int32_t>(rng.uniform_int(32));
  }
  said << " streams bursty " << bursty << " prefixed " << prefixed << " sessions " << chatty;
}

// SLO targets and what admission does on a predicted miss, the ladder's thresholds, queue caps,
// max_tokens on the cap rung, and a rate limit on one class.
void randomise_admission(Rng& rng, Scenario& scenario, std::ostringstream& said) {
  for (SloClass& slo : scenario.node.slo_classes) {
    if (slo.ttft_target) *slo.ttft_target = milliseconds_between(rng, 20, 3000);
    if (slo.tpot_target) *slo.tpot_target = milliseconds_between(rng, 10, 200);
    slo.sheddable = coin(rng, 0.8);
    // Downgrading needs a class to go to.
    const MissAction actions[] = {MissAction::kReject, MissAction::kBestEffort,
                                  MissAction::kDowngrade};
    slo.on_predicted_miss = actions[rng.uniform_int(slo.downgrade_to ? 3 : 2)];
  }
  AdmissionOptions& admission = scenario.scheduler.admission;
  double enter = between(rng, 0.1, 1.2);
  for (size_t rung = 1; rung < admission.ladder.enter.size(); ++rung) {
    admission.ladder.enter[rung] = enter;
    enter += between(rng, 0.01, 0.8);
  }
  admission.ladder.leave_fraction = between(rng, 0.2, 1);
  admission.ladder.dwell = milliseconds_between(rng, 0, 500);
  admission.no_target_deadline = milliseconds_between(rng, 200, 30000);
  if (coin(rng, 0.2)) admission.queue_cap = 1 + static_cast<int64_t>(rng.uniform_int(64));
  admission.capped_max_tokens = 1 + static_cast<int32_t>(rng.uniform_int(256));
  if (coin(rng, 0.2)) {
    RateLimit limit;
    limit.slo_class =
        SloClassId(static_cast<uint8_t>(rng.uniform_int(scenario.node.slo_classes.size())));
    double rate = 0;
    for (const StreamSpec& stream : scenario.streams) rate += stream.arrival.rate_per_s;
    if (coin(rng)) {
      limit.requests_per_s = rate * between(rng, 0.05, 1);
    } else {
      limit.tokens_per_s = rate * between(rng, 20, 400);
    }
    limit.burst_s = between(rng, 0.05, 2);
    admission.rate_limits.push_back(limit);
  }
  said << " ladder from " << admission.ladder.enter[1] << " queue cap " << admission.queue_cap
       << " rate limits " << admission.rate_limits.size();
}

// A third node, unlike the other two: four H200s, the large model at TP=4, the small model on
// three of them only (GPU 3 holds the large model alone and gives it all its KV memory), 32-token
// KV blocks, a constant-time cost model for the small model, and 2 GiB of host memory (swaps
// that do not fit fall back to recomputation).
constexpr const char* kFourGpuScenario = R"(
node: {gpus: 4, hardware: h200-sxm-141gb, kv_block_tokens: 32, host_memory_gib: 2}
models:
  - {name: llama-3-8b, tier: small, shape: llama-3-8b, gpus: [0, 1, 2],
     cost: {model: constant, iteration_ms: 12}}
  - {name: llama-3-70b, tier: large, shape: llama-3-70b, gpus: all, tensor_parallel: 4,
     prefill_chunk_tokens: 256}
slo_classes:
  - {name: interactive, ttft_ms: 300, tpot_ms: 60, weight: 4}
  - {name: standard, ttft_ms: 3000, weight: 2, downgrade_to: batch}
  - {name: batch, weight: 1}
workload:
  streams:
    - {name: a, model: llama-3-8b, class: interactive, arrival: {process: poisson, rate_per_s: 200},
       prompt_tokens: {dist: lognormal, mean: 300, p99: 3000, max: 8192},
       output_tokens: {dist: geometric, mean: 48, max: 512}, max_tokens: 512}
    - {name: b, model: llama-3-8b, class: batch, arrival: {process: poisson, rate_per_s: 60},
       prompt_tokens: {dist: lognormal, mean: 1000, p99: 8000, max: 16000},
       output_tokens: {dist: geometric, mean: 200, max: 2048}, max_tokens: 2048}
    - {name: c, model: llama-3-70b, class: interactive, arrival: {process: poisson, rate_per_s: 10},
       prompt_tokens: {dist: lognormal, mean: 200, p99: 2000, max: 8192},
       output_tokens: {dist: geometric, mean: 40, max: 512}, max_tokens: 512}
    - {name: d, model: llama-3-70b, class: standard, arrival: {process: poisson, rate_per_s: 5},
       prompt_tokens: {dist: lognormal, mean: 2000, p99: 12000, max: 24000},
       output_tokens: {dist: geometric, mean: 100, max: 1024}, max_tokens: 1024}
)";

// The nodes the trials draw from, with each tier's capacity alone (requests/s) that a trial's
// load is a fraction of: measured for peak-mixed's (docs/capacity.md), rough for the others (the
// draw spans 0.2-1.9 x, so an estimate only shifts where the trials fall).
struct BaseNode {
  Scenario scenario;
  double small_capacity_per_s;
  double large_capacity_per_s;
};

std::vector<BaseNode> base_scenarios() {
  return {{peak_mixed_scenario(), kPeakSmallCapacityPerS, kPeakLargeCapacityPerS},
          {parse_scenario(kTwoSmallModelsScenario, "two-small-models.yaml"), kPeakSmallCapacityPerS,
           kPeakLargeCapacityPerS},
          {parse_scenario(kFourGpuScenario, "four-gpus.yaml"), 400, 20}};
}

// One trial's scenario, its clients' cancellations, and a line describing it for failure
// messages.
struct Trial {
  Scenario scenario;
  ClientCancellationSpec cancellations;
  std::string description;
};

// The command that runs this one trial again, for a failure message.
std::string replay_command(const char* test, int trial) {
  return "replay: GANGWAY_RANDOM_FIRST_TRIAL=" + std::to_string(trial) +
         " GANGWAY_RANDOM_TRIALS=1 GANGWAY_RANDOM_CLUSTER_TRIALS=1 ctest "
         "--test-dir " GANGWAY_BUILD_DIR " --output-on-failure -R 'RandomScenarios." +
         test + "$'";
}

Trial random_trial(const std::vector<BaseNode>& bases, int trial) {
  Rng rng(20261201 + static_cast<uint64_t>(trial) * 7919);
  const size_t base = static_cast<size_t>(rng.uniform_int(bases.size()));
  Trial out{bases[base].scenario, {}, {}};
  Scenario& scenario = out.scenario;
  std::ostringstream said;
  said << "node " << base << " ";
  scenario.seed = 500 + static_cast<uint64_t>(trial);
  scenario.warmup = Duration(0);
  scenario.duration = milliseconds_between(rng, 2000, 5000);
  scenario.drain_limit = std::chrono::seconds(900);

  const double load = between(rng, 0.2, 1.9);
  // A tenth of the trials at each end: one tier alone.
  const double draw = rng.uniform01();
  const double large_share = draw < 0.1 ? 0.0 : draw > 0.9 ? 1.0 : between(rng, 0.05, 0.95);
  set_tier_rates(scenario, load * (1 - large_share) * bases[base].small_capacity_per_s + 0.5,
                 load * large_share * bases[base].large_capacity_per_s + 0.2);
  said << "load " << load << " LM share " << large_share;

  const std::vector<std::string>& names = policy_names();
  PolicySpec& policy = scenario.policy;
  policy.name = names[static_cast<size_t>(trial) % names.size()];
  policy.mode = coin(rng) ? ExecutionMode::kLease : ExecutionMode::kExclusive;
  policy.lease_min = milliseconds_between(rng, 10, 100);
  policy.lease_max = policy.lease_min + milliseconds_between(rng, 0, 300);
  policy.batching_delay = milliseconds_between(rng, 0, 60);
  policy.urgency_margin = milliseconds_between(rng, 0, 100);
  policy.max_large_wait = milliseconds_between(rng, 200, 3000);
  policy.large_weight = between(rng, 0.2, 5);
  policy.small_weight = between(rng, 0.2, 8);
  policy.conservative_backfill = coin(rng);
  policy.slice_period = milliseconds_between(rng, 50, 400);
  policy.slice_large_share = between(rng, 0.1, 0.9);
  said << " policy " << policy.name << " mode " << to_string(policy.mode);

  SchedulerOptions& options = scenario.scheduler;
  options.admission.enabled = coin(rng, 0.6);
  options.admission.queue_order = coin(rng) ? QueueOrder::kSlack : QueueOrder::kArrival;
  options.admission.priority_preemption = coin(rng);
  options.admission.weight_shift.enabled = coin(rng, 0.3);
  options.kv_split = coin(rng) ? KvSplit::kDynamic : KvSplit::kStatic;
  options.large_kv_fraction = between(rng, 0.25, 0.75);
  const PreemptionPolicy preemptions[] = {PreemptionPolicy::kCost, PreemptionPolicy::kPause,
                                          PreemptionPolicy::kSwap, PreemptionPolicy::kRecompute};
  const auto preemption = static_cast<size_t>(rng.next_u64() % 4);
  options.preemption = preemptions[preemption];
  options.prefix_caching = coin(rng, 0.7);
  options.host_prefix_cache = coin(rng, 0.3);
  options.lm_cache_aware_batching = coin(rng);
  options.routing = router_names()[rng.uniform_int(router_names().size())];
  options.oracle_predictor = coin(rng, 0.2);
  said << " admission " << options.admission.enabled << " dynamic KV "
       << (options.kv_split == KvSplit::kDynamic) << " preemption " << preemption << " routing "
       << options.routing;

  // Batching limits: few or many sequences, small or large token budgets.
  constexpr int32_t kBudgets[] = {128, 256, 512, 1024};
  for (ModelSpec& model : scenario.node.models) {
    model.max_num_seqs = 4 + static_cast<int32_t>(rng.uniform_int(253));
    model.max_batched_tokens = kBudgets[rng.uniform_int(4)];
    model.prefill_chunk_tokens = std::min(model.prefill_chunk_tokens, model.max_batched_tokens);
  }

  randomise_workload(rng, scenario, said);
  randomise_admission(rng, scenario, said);

  const auto faults = static_cast<int>(rng.next_u64() % 4);
  for (int i = 0; i < faults; ++i)
    scenario.faults.push_back(random_fault(rng, scenario.duration, scenario.node.gpu_count));
  said << " faults " << faults;
  // Clients that cancel, from a generator of their own (the draws above stay as they were).
  Rng clients(911 + static_cast<uint64_t>(trial) * 6271);
  if (coin(clients, 0.75)) {
    out.cancellations.fraction = between(clients, 0.02, 0.3);
    out.cancellations.seed = 77 + static_cast<uint64_t>(trial);
  }
  said << " cancelling clients " << out.cancellations.fraction;
  out.description = said.str();
  return out;
}

TEST(RandomScenarios, EveryRequestEndsOnceUnderAnyCombinationOfSettings) {
  const std::vector<BaseNode> bases = base_scenarios();
  const char* more = std::getenv("GANGWAY_RANDOM_TRIALS");
  const char* first = std::getenv("GANGWAY_RANDOM_FIRST_TRIAL");
  const int first_trial = first ? std::atoi(first) : 0;
  const int trials = more ? std::atoi(more) : kTrials;
  for (int trial = first_trial; trial < first_trial + trials; ++trial) {
    const Trial drawn = random_trial(bases, trial);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + drawn.description + "\n" +
                 replay_command("EveryRequestEndsOnceUnderAnyCombinationOfSettings", trial));
    RequestOutcomeModel model;
    std::optional<SimulationResult> run;
    try {
      const std::unique_ptr<RequestSource> source = make_request_source(drawn.scenario);
      SimulationOptions options = simulation_options_of(drawn.scenario);
      options.cancellations = drawn.cancellations;
      options.observer = &model;
      Simulator simulator(drawn.scenario.node, drawn.scenario.scheduler,
                          make_policy(drawn.scenario.policy), nullptr, *source, options);
      run.emplace(simulator.run());
    } catch (const std::exception& error) {  // a broken invariant, with the trial's settings
      ADD_FAILURE() << error.what();
      continue;
    }
    const RequestStats& total = run->metrics.total();
    ASSERT_GT(total.arrived(), 0u);
    expect_every_request_ended_once(*run);
    model.check_all_ended(Time::zero() + seconds_to_duration(run->simulated_s));
    EXPECT_TRUE(model.failures().empty()) << "the reference model of request outcomes:\n"
                                          << ::testing::PrintToString(model.failures());
    EXPECT_EQ(model.arrived(), run->requests);
    // Cancelled only by their clients, or by the driver at the drain limit: a request still
    // running 900 s after arrivals stopped is a deadlock.
    EXPECT_EQ(total.cancelled(), total.count_with_reason(Reason::kClientCancelled));
  }
}

// The same trials on two to four such nodes behind each cluster router, with and without
// spillover and with a share of the traffic pinned to node 0 (faults hit node 0 only): every
// request ends once across the nodes, the retried ones included, and every node's scheduler
// checks its invariants after every event. GANGWAY_RANDOM_CLUSTER_TRIALS=N searches wider.
TEST(RandomScenarios, EveryRequestEndsOnceAcrossAClusterOfNodes) {
  const std::vector<BaseNode> bases = base_scenarios();
  const char* more = std::getenv("GANGWAY_RANDOM_CLUSTER_TRIALS");
  const char* first = std::getenv("GANGWAY_RANDOM_FIRST_TRIAL");
  const int first_trial = first ? std::atoi(first) : 0;
  const int trials = more ? std::atoi(more) : kClusterTrials;
  for (int trial = first_trial; trial < first_trial + trials; ++trial) {
    Trial drawn = random_trial(bases, trial);
    Rng rng(7 + static_cast<uint64_t>(trial) * 104729);
    ClusterSpec cluster;
    cluster.nodes = 2 + static_cast<int>(rng.uniform_int(3));
    const ClusterRouterKind routers[] = {ClusterRouterKind::kRoundRobin,
                                         ClusterRouterKind::kLeastLoaded,
                                         ClusterRouterKind::kLoadReport};
    cluster.router = routers[rng.uniform_int(3)];
    cluster.spillover = coin(rng, 0.7);
    cluster.pinned_share = coin(rng) ? between(rng, 0, 1) : 0;
    cluster.report_interval = coin(rng) ? milliseconds_between(rng, 0, 500) : Duration(0);
    // The trial's load per node.
    for (StreamSpec& stream : drawn.scenario.streams) stream.arrival.rate_scale = cluster.nodes;
    SCOPED_TRACE("cluster trial " + std::to_string(trial) + ": " + drawn.description + " nodes " +
                 std::to_string(cluster.nodes) + " router " +
                 std::to_string(static_cast<int>(cluster.router)) + " spillover " +
                 std::to_string(cluster.spillover) + " pinned " +
                 std::to_string(cluster.pinned_share) + "\n" +
                 replay_command("EveryRequestEndsOnceAcrossAClusterOfNodes", trial));
    drawn.scenario.cluster = cluster;
    std::optional<ClusterResult> run;
    try {
      run.emplace(simulate_cluster(drawn.scenario));
    } catch (const std::exception& error) {  // a broken invariant, with the trial's settings
      ADD_FAILURE() << error.what();
      continue;
    }
    const RequestStats& total = run->total.metrics.total();
    ASSERT_GT(total.arrived(), 0u);
    expect_every_request_ended_once(run->total);
    EXPECT_EQ(total.cancelled(), 0u);
  }
}

}  // namespace
}  // namespace gangway
