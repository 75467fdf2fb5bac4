// The simulator checked against queueing theory, on the scenarios shipped in examples/validation.
//
// Each case runs R independent replications (seeds 1..R) of a scenario whose closed form is
// known and compares the mean queueing delay (arrival to first scheduling) with it. The
// tolerance comes from the data, not from a guess: the R replication means are independent, so
// their standard error is s / sqrt(R), and the test accepts |mean - theory| <= 4 SE + bias,
// where `bias` is a stated model difference (Erlang C assumes exponential service; ours is a
// geometric number of fixed steps) plus what is left of the start-empty transient after each
// scenario's warm-up (requests arriving in the first warmup_s are not measured). With 4 SE the
// chance of a
// false failure is about 6e-5 per case. The test also checks that the estimate is tight (SE
// under 4 % of the theory), so a broken simulator cannot pass by being noisy.

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "config/scenario_simulation.h"
#include "config/scenario_source.h"
#include "sched/policy_registry.h"
#include "sim/simulator.h"

namespace gangway {
namespace {

struct Replications {
  double mean_ms = 0;
  double standard_error_ms = 0;
  double utilization = 0;
};

Scenario validation_scenario(const std::string& file) {
  return load_scenario(std::string(GANGWAY_SOURCE_DIR) + "/examples/validation/" + file);
}

Replications replicate(Scenario scenario, double rate_scale, int replications) {
  for (StreamSpec& stream : scenario.streams) stream.arrival.rate_scale = rate_scale;
  std::vector<double> means;
  double utilization = 0;
  for (int r = 1; r <= replications; ++r) {
    scenario.seed = static_cast<uint64_t>(r);
    std::unique_ptr<RequestSource> source = make_request_source(scenario);
    Simulator simulator(scenario.node, scenario.scheduler, make_policy(scenario.policy), nullptr,
                        *source, simulation_options_of(scenario));
    SimulationResult result = simulator.run();
    const RequestStats& total = result.metrics.total();
    EXPECT_EQ(total.arrived(), total.completed()) << "every request must complete";
    EXPECT_GT(total.arrived(), 10000u) << "too few customers for the stated precision";
    means.push_back(total.queue_ms().mean());
    utilization += result.node_time.total_seconds(GpuActivity::kRunningSmall) /
                   (to_seconds(result.node_time.elapsed()) * scenario.node.gpu_count);
  }
  const double mean = std::accumulate(means.begin(), means.end(), 0.0) / replications;
  double squares = 0;
  for (double m : means) squares += (m - mean) * (m - mean);
  const double sd = std::sqrt(squares / (replications - 1));
  return Replications{mean, sd / std::sqrt(static_cast<double>(replications)),
                      utilization / replications};
}

void expect_close(const Replications& got, double theory_ms, double bias_fraction,
                  const std::string& label) {
  const double tolerance = 4 * got.standard_error_ms + bias_fraction * theory_ms;
  EXPECT_NEAR(got.mean_ms, theory_ms, tolerance)
      << label << ": simulated " << got.mean_ms << " ms (SE " << got.standard_error_ms
      << ") vs closed form " << theory_ms << " ms";
  EXPECT_LT(got.standard_error_ms, 0.04 * theory_ms) << label << ": estimate too noisy to judge";
  std::cout << "[validation] " << label << ": simulated Wq " << got.mean_ms << " ms +- "
            << got.standard_error_ms << " (SE), closed form " << theory_ms << " ms, utilization "
            << got.utilization << "\n";
}

// Pollaczek-Khinchine mean wait: lambda E[S^2] / (2 (1 - rho)).
double pollaczek_khinchine_ms(double lambda, double service_s, double second_moment_s2) {
  const double rho = lambda * service_s;
  return 1e3 * lambda * second_moment_s2 / (2 * (1 - rho));
}

// Erlang C mean wait for c servers, arrival rate lambda, mean service s.
double erlang_c_wait_ms(int c, double lambda, double service_s) {
  const double a = lambda * service_s;  // offered load in servers
  double sum = 0;
  double term = 1;  // a^k / k!
  for (int k = 0; k < c; ++k) {
    sum += term;
    term *= a / (k + 1);
  }
  const double tail = term * c / (c - a);  // a^c / c! * c / (c - a)
  const double p_wait = tail / (sum + tail);
  return 1e3 * p_wait * service_s / (c - a);
}

constexpr int kReplications = 8;
// Starting empty biases the mean wait low. The warm-up removes most of it; what remains is
// allowed for here (measured: runs 15x longer move the estimates by less than this).
constexpr double kTransientBias = 0.02;

TEST(QueueingValidation, ErlangCMatchesTheKnownTableValue) {
  // Erlang C: M/M/8 at lambda 6 (mu 1): Wq = 0.1785; at lambda 7.2: 0.8769.
  EXPECT_NEAR(erlang_c_wait_ms(8, 6.0, 1.0) / 1e3, 0.1785, 5e-4);
  EXPECT_NEAR(erlang_c_wait_ms(8, 7.2, 1.0) / 1e3, 0.8769, 5e-4);
  EXPECT_NEAR(erlang_c_wait_ms(2, 1.5, 1.0) / 1e3, 1.2857, 5e-4);
}

TEST(QueueingValidation, MD1ConstantServiceAtTwoLoads) {
  const Scenario scenario = validation_scenario("md1.yaml");
  const double service_s = 0.010;  // 10 iterations of 1 ms
  for (double load : {0.5, 0.8}) {
    const double lambda = load / service_s;
    const Replications got = replicate(scenario, load / 0.8, kReplications);
    const double theory = pollaczek_khinchine_ms(lambda, service_s, service_s * service_s);
    expect_close(got, theory, kTransientBias, "M/D/1 rho=" + std::to_string(load));
    EXPECT_NEAR(got.utilization, load, 0.02);
  }
}

TEST(QueueingValidation, MG1GeometricServiceAtTwoLoads) {
  const Scenario scenario = validation_scenario("mg1-geometric.yaml");
  const double step_s = 0.001;
  const double mean_steps = 10;
  const double service_s = mean_steps * step_s;
  const double second_moment = step_s * step_s * mean_steps * (2 * mean_steps - 1);
  for (double load : {0.5, 0.8}) {
    const double lambda = load / service_s;
    const Replications got = replicate(scenario, load / 0.8, kReplications);
    const double theory = pollaczek_khinchine_ms(lambda, service_s, second_moment);
    expect_close(got, theory, kTransientBias, "M/G/1 geometric rho=" + std::to_string(load));
  }
}

// M/M/8 at one load; the two loads are two tests so that `ctest -j` runs them side by side (each
// is the longest test of the suite).
void expect_mmc_matches_erlang_c(double load) {
  const Scenario scenario = validation_scenario("mmc-8.yaml");
  const double service_s = 0.050;
  const double lambda = load * 8 / service_s;
  const Replications got = replicate(scenario, load / 0.9, kReplications);
  // Service CV^2 is 0.98, not 1: the M/G/c wait is ~(1 + CV^2)/2 = 0.99 of Erlang C.
  const double theory = erlang_c_wait_ms(8, lambda, service_s);
  expect_close(got, theory, 0.01 + kTransientBias, "M/M/8 rho=" + std::to_string(load));
  EXPECT_NEAR(got.utilization, load, 0.02);
}

TEST(QueueingValidation, MMcErlangCWithEightGpusAtThreeQuartersLoad) {
  expect_mmc_matches_erlang_c(0.75);
}

TEST(QueueingValidation, MMcErlangCWithEightGpusAtNinetyPercentLoad) {
  expect_mmc_matches_erlang_c(0.9);
}

}  // namespace
}  // namespace gangway
