// The capacity table says what a reader needs to act on: settings that are not cut short, a miss
// that never reads as the target, seeds whose answers are too far apart to plan on, and whether
// the best setting leads by more than the seeds' spread.
#include "cli/capacity_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace gangway {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ProbeResult probe(double rps, bool passed, double attainment) {
  ProbeResult probe;
  probe.scale = rps / 100;
  probe.offered_rps = rps;
  probe.small_rps = 0.95 * rps;
  probe.large_rps = 0.05 * rps;
  probe.goodput_rps = rps;
  probe.passed = passed;
  probe.worst = WorstPair{"llama-3-70b", "interactive", attainment, 0.99};
  return probe;
}

// One seed's search whose answer is `rps`, with a miss of `missed` just above it.
SeedSearch seed_answer(uint64_t seed, double rps, double missed = 0.9895) {
  SeedSearch search;
  search.seed = seed;
  search.capacity = probe(rps, true, 0.995);
  search.first_failure = probe(1.05 * rps, false, missed);
  search.probes = {*search.first_failure, *search.capacity};
  return search;
}

CapacityResult result(const std::string& vary_value, std::vector<double> answers) {
  CapacityResult result;
  result.policy.name = "gangway";
  result.mode = "lease";
  result.scope = CapacityScope::kMix;
  result.settings = {{"models[llama-3-70b].max_batched_tokens", vary_value, "--vary"}};
  result.label = "gangway-lease max_batched_tokens=" + vary_value;
  for (size_t i = 0; i < answers.size(); ++i) {
    result.seeds.push_back(seed_answer(42 + i, answers[i]));
  }
  return result;
}

CapacityReport report(std::vector<CapacityResult> results) {
  CapacityReport report;
  report.scenario_name = "peak-mixed";
  report.class_targets = {{"interactive", 0.99}};
  report.range = {0.01, 100, 0.03};
  report.seeds = {42, 43, 44};
  report.measured_s = 60;
  report.warmup_s = 5;
  report.results = std::move(results);
  return report;
}

std::string table(const CapacityReport& report) {
  std::ostringstream out;
  print_capacity_table(out, report);
  return out.str();
}

TEST(CapacityTable, OnePolicyIsNamedAboveTheTableAndTheSettingsAreNotCut) {
  const std::string text =
      table(report({result("256", {400, 410, 420}), result("512", {300, 310, 320})}));
  EXPECT_THAT(text, HasSubstr(", policy gangway-lease\n"));
  EXPECT_THAT(text, HasSubstr("\nsettings "));
  EXPECT_THAT(text, HasSubstr("\nmax_batched_tokens=256 "));
  EXPECT_THAT(text, HasSubstr("\nmax_batched_tokens=512 "));
  EXPECT_THAT(text, Not(HasSubstr("~")));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
}

TEST(CapacityTable, AMissJustUnderTheTargetNeverReadsAsTheTarget) {
  const std::string text = table(report({result("512", {300, 310, 320})}));
  EXPECT_THAT(text, HasSubstr("interactive@llama-3-70b 98.9%"));
  EXPECT_THAT(text, Not(HasSubstr("99.0%")));
}

TEST(CapacityTable, SeedsFarApartGetANoteThatListsThemAndSaysWhatToDo) {
  const std::string text = table(report({result("512", {13.9, 186.4, 8.4})}));
  EXPECT_THAT(text,
              HasSubstr("the seeds disagree (max_batched_tokens=512 mix: 13.9, 186, 8.4 req/s)"));
  EXPECT_THAT(text, HasSubstr("interactive@llama-3-70b"));
  EXPECT_THAT(text, HasSubstr("A wide interval"));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
  // Seeds that agree get no note.
  EXPECT_THAT(table(report({result("512", {300, 310, 320})})), Not(HasSubstr("disagree")));
}

TEST(CapacityTable, TheBestSettingIsMarkedWhenItsLeadIsWithinTheSpread) {
  const std::string overlapping =
      table(report({result("256", {200, 400, 600}), result("512", {300, 310, 320})}));
  EXPECT_THAT(overlapping, HasSubstr("best for mix: max_batched_tokens=256 (400 req/s), not a "
                                     "clear lead"));
  const std::string clear =
      table(report({result("256", {400, 410, 420}), result("512", {300, 310, 320})}));
  EXPECT_THAT(clear, HasSubstr("best for mix: max_batched_tokens=256 (410 req/s)\n"));
}

}  // namespace
}  // namespace gangway
