// An upper bound on the goodput any scheduler could reach on a workload: a fluid relaxation of
// the node over the measured window (docs/gang-scheduling.md, "How close to the limit").
//
// The relaxation. The large model (LM) gets a share s of the node's time (the gang: all GPUs),
// the small models (SM) the rest, 1 - s of every GPU; no barrier, no queueing, an unbounded
// prefix cache shared by every GPU, perfect knowledge of output lengths. Each tier decodes in
// batches of one size B, chosen by the bound. A request counts as goodput when it is served, and
// it can be on time only if
//   - its own prefill (what an unbounded cache would not hold), alone on the model's GPUs, fits
//     within its TTFT target (and its own deadline), and
//   - for a class with a TPOT target, the tier keeps pace: one decode iteration of the batch,
//     t(B), is at most the tier's share times the target (s x TPOT for the LM, (1 - s) x TPOT
//     for a GPU of the SM), so each resident sequence gets a token every TPOT.
// The work it costs: its prefill tokens at the model's compute-bound rate (the marginal time of
// a prompt token in a large chunk: no schedule prefills faster), and its decode tokens at
// t(B) / B each (every iteration that decodes B sequences takes at least t(B), whatever else it
// carries). Both are lower bounds on the GPU-time a schedule spends, so each is a constraint on
// the tier's time budget (the window times its share, times its GPUs); the bound combines the
// two with a Lagrange multiplier and keeps the smallest result, and within a budget it serves
// the cheapest requests first (every request counts one in goodput). Then it maximises over s
// and the two batch sizes. So it is a bound on a steady-state rate: what a scheduler serves of
// the window's arrivals after the window ends (the drain) is not in the budget.
//
// Sans-I/O and deterministic; O(requests log requests) per grid point of a small fixed grid.
#pragma once

#include <cstdint>
#include <vector>

#include "core/node_spec.h"
#include "core/time.h"
#include "workload/request_source.h"

namespace gangway {

struct FluidBound {
  double window_s = 0;
  // On-time requests per second of the window at the bound's optimum, and the requests offered.
  double goodput_rps = 0;
  double offered_rps = 0;
  // Requests whose own prefill fits within their TTFT target (the rest can never be on time).
  double feasible_rps = 0;
  // The optimum: the LM's share of the node's time and each tier's decode batch size.
  double large_share = 0;
  int32_t large_batch = 0;
  int32_t small_batch = 0;
  // By ModelId value and by SloClassId value: offered and bounded goodput, requests/s.
  std::vector<double> model_offered_rps;
  std::vector<double> model_goodput_rps;
  std::vector<double> class_offered_rps;
  std::vector<double> class_goodput_rps;
};

// The bound over the requests `source` offers with arrival in [window_start, window_end) (the
// measured window), on `node`. Reads the source to its end (or the window's).
FluidBound compute_fluid_bound(const NodeSpec& node, RequestSource& source, Time window_start,
                               Time window_end);

}  // namespace gangway
