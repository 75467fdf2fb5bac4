// The tables `gangway simulate` prints on a terminal, 100 columns wide: one row per policy
// (goodput, SLO attainment, the latencies and GPU-time losses policies are judged by), the prefix
// cache, then per policy a row per SLO class and model with the reasons requests did not
// complete. With --seeds: each figure's mean and the half-width of its 95 % confidence interval
// over the seeds. "-" marks a figure with no data (no request arrived, none completed).
#pragma once

#include <ostream>
#include <vector>

#include "cli/simulation_run.h"
#include "cli/simulation_seeds.h"
#include "config/scenario.h"

namespace gangway {

void print_simulation_table(std::ostream& out, const Scenario& scenario,
                            const std::vector<PolicyRun>& runs);

void print_seed_summary_table(std::ostream& out, const Scenario& scenario,
                              const std::vector<RunGroupSummary>& groups);

// "measured 60 s after a 5 s warm-up": the one phrase every report uses for its window.
std::string measured_window_text(double measured_s, double warmup_s);

}  // namespace gangway
