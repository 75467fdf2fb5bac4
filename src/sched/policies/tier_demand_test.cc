// The demand-driven split of the node's time between the gang and the small models
// (sched/policies/tier_demand.h): each tier gets its demand when both fit, the resident
// sequences' paces first under overload, the large model never less than its floor nor more
// than its ceiling while both tiers have demand, and the whole node when the other has none.

#include "sched/policies/tier_demand.h"

#include <gtest/gtest.h>

namespace gangway {
namespace {

TierDemand demand(double pace, double prefill) {
  TierDemand d;
  d.pace = pace;
  d.prefill = prefill;
  return d;
}

TEST(TierDemand, EachTierGetsItsDemandAndTheWeightsSplitOnlyWhatIsLeft) {
  ShareLimits limits;  // floor 0.3, ceiling 0.7, weights 1 : 6, 5 % switching
  const SharePlan plan = plan_shares(demand(0.3, 0.1), demand(0.2, 0.1), limits);
  ASSERT_TRUE(plan.contended());
  // Demand 0.4 and 0.3; 0.95 - 0.7 = 0.25 spare, 1/7 of it to the large model.
  EXPECT_NEAR(plan.large_share, 0.4 + 0.25 / 7, 1e-9);
}

TEST(TierDemand, DemandNotWeightsDecidesTheSplit) {
  ShareLimits limits;
  limits.large_min = 0;
  limits.large_max = 1;
  // The large model's decode pace alone needs 60 % of the node: with weights 1 : 6 it still
  // gets it, and the share follows the demand as it moves.
  const SharePlan heavy = plan_shares(demand(0.6, 0), demand(0.1, 0.1), limits);
  EXPECT_GE(heavy.large_share, 0.6);
  const SharePlan light = plan_shares(demand(0.1, 0), demand(0.1, 0.1), limits);
  EXPECT_LT(light.large_share, heavy.large_share);
  EXPECT_GE(light.large_share, 0.1);
}

TEST(TierDemand, OverloadServesThePacesFirstAndSplitsTheRestByTheWeights) {
  ShareLimits limits;
  limits.large_min = 0;
  limits.large_max = 1;
  // Together they want 150 % of the node. Paces 0.3 + 0.2; the other 0.45 split 1 : 6.
  SharePlan plan = plan_shares(demand(0.3, 0.2), demand(0.2, 0.8), limits);
  EXPECT_NEAR(plan.large_share, 0.3 + 0.45 / 7, 1e-9);
  // A tier's weighted part beyond its demand goes to the other: the small models need 0.3 in
  // all, so the large model gets the rest of the usable time.
  plan = plan_shares(demand(0.1, 2.0), demand(0.1, 0.2), limits);
  EXPECT_NEAR(plan.large_share, 0.95 - 0.3, 1e-9);
  // Paces that alone do not fit are split in proportion.
  plan = plan_shares(demand(0.8, 0.5), demand(0.4, 0.5), limits);
  EXPECT_NEAR(plan.large_share, 0.95 * 0.8 / 1.2, 1e-9);
}

TEST(TierDemand, TheLargeModelStaysWithinTheOperatorsFloorAndCeiling) {
  const ShareLimits limits;
  // The small models want far more: the large model keeps its floor (its guarantee).
  SharePlan plan = plan_shares(demand(0.05, 0.05), demand(1.0, 1.0), limits);
  EXPECT_DOUBLE_EQ(plan.large_share, limits.large_min);
  // And the other way round: the small models keep 1 - ceiling.
  plan = plan_shares(demand(1.0, 1.0), demand(0.01, 0), limits);
  EXPECT_DOUBLE_EQ(plan.large_share, limits.large_max);
}

TEST(TierDemand, ATierAloneGetsTheWholeNode) {
  const ShareLimits limits;
  SharePlan plan = plan_shares(demand(0.2, 0.3), TierDemand{}, limits);
  EXPECT_DOUBLE_EQ(plan.large_share, 1.0);
  plan = plan_shares(TierDemand{}, demand(0.2, 0.3), limits);
  EXPECT_DOUBLE_EQ(plan.large_share, 0.0);
}

}  // namespace
}  // namespace gangway
