#include "core/hardware_spec.h"

namespace gangway {

HardwareSpec h100_sxm_80gb() {
  HardwareSpec spec;
  spec.name = "h100-sxm-80gb";
  spec.hbm_bytes = 80LL * 1000 * 1000 * 1000;
  spec.hbm_bytes_per_s = 3.35e12;
  spec.bf16_flops_per_s = 989e12;
  spec.nvlink_bytes_per_s = 450e9;
  spec.allreduce_latency_s = 33e-6;
  spec.allreduce_bytes_per_s = 210e9;
  spec.pcie_bytes_per_s = 50e9;
  spec.roofline_efficiencies = RooflineEfficiencies{};
  return spec;
}

HardwareSpec h200_sxm_141gb() {
  HardwareSpec spec = h100_sxm_80gb();
  spec.name = "h200-sxm-141gb";
  spec.hbm_bytes = 141LL * 1000 * 1000 * 1000;
  spec.hbm_bytes_per_s = 4.8e12;
  spec.roofline_efficiencies = {
      .compute_efficiency = 0.5, .bandwidth_efficiency = 0.57, .launch_overhead_s = 0.0011};
  return spec;
}

}  // namespace gangway
