// The roofline cost model's three efficiency settings as one set: the achieved fraction of peak
// bf16 compute (model FLOPs utilisation), the achieved fraction of peak HBM bandwidth, and a fixed
// time per iteration (kernel launches, sampling, the engine's glue). A GPU preset carries the set
// that reproduces its reference measurement; a model's cost settings start from it.
#pragma once

namespace gangway {

struct RooflineEfficiencies {
  // The defaults reproduce a vLLM-class engine on an H100 SXM: 5.86 ms predicted for a
  // Llama-3-8B batch-1 decode step against ~5.7 ms published for vLLM V1 (src/model/README.md).
  double compute_efficiency = 0.5;
  double bandwidth_efficiency = 0.85;
  double launch_overhead_s = 0.0002;
};

}  // namespace gangway
