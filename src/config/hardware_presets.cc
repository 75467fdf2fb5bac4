#include "config/hardware_presets.h"

namespace gangway {
namespace {

struct HardwarePreset {
  const char* name;
  HardwareSpec (*make)();
};

// h100-sxm-80gb and h200-sxm-141gb are in core/hardware_spec.cc (the default node's GPU).
constexpr HardwarePreset kHardwarePresets[] = {
    {"a100-sxm-80gb", &a100_sxm_80gb},   {"h100-sxm-80gb", &h100_sxm_80gb},
    {"h200-sxm-141gb", &h200_sxm_141gb}, {"b200-sxm-180gb", &b200_sxm_180gb},
    {"mi300x-192gb", &mi300x_192gb},
};

// The H100 fit's all-reduce algorithm bandwidth per unit of one-way link bandwidth (210 GB/s
// over 450 GB/s, core/hardware_spec.h). For GPUs without a public TP=8 collective profile the
// all-reduce bandwidth is this share of their link bandwidth: an estimate, to be replaced by a
// measurement (node.hardware.allreduce_gb_per_s).
constexpr double kAllReduceShareOfLink = 210.0 / 450.0;

}  // namespace

HardwareSpec a100_sxm_80gb() {
  HardwareSpec spec;
  spec.name = "a100-sxm-80gb";
  // NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM): 80 GB HBM2e, 2,039 GB/s.
  spec.hbm_bytes = 80LL * 1000 * 1000 * 1000;
  spec.hbm_bytes_per_s = 2.039e12;
  // Same datasheet: BF16 Tensor Core 312 TFLOPS (624 with sparsity; dense used).
  spec.bf16_flops_per_s = 312e12;
  // Same datasheet: NVLink 600 GB/s (both directions together): 300 GB/s one way.
  spec.nvlink_bytes_per_s = 300e9;
  spec.allreduce_latency_s = 33e-6;  // as the H100 fit (NVSwitch, NCCL): an estimate
  spec.allreduce_bytes_per_s = kAllReduceShareOfLink * spec.nvlink_bytes_per_s;
  // Same datasheet: PCIe Gen4 64 GB/s (both directions): 32 GB/s one way nominal; ~25 GB/s is
  // what host copies reach (about 80 %, as Gen5's 50 of 64 GB/s, core/hardware_spec.h).
  spec.pcie_bytes_per_s = 25e9;
  return spec;
}

HardwareSpec b200_sxm_180gb() {
  HardwareSpec spec;
  spec.name = "b200-sxm-180gb";
  // NVIDIA DGX B200 datasheet: 8 GPUs with 1,440 GB of HBM3e (180 GB each) and 64 TB/s of HBM
  // bandwidth (8 TB/s each).
  spec.hbm_bytes = 180LL * 1000 * 1000 * 1000;
  spec.hbm_bytes_per_s = 8e12;
  // NVIDIA HGX B200 specifications: FP16/BF16 Tensor Core 36 PFLOPS for 8 GPUs with sparsity,
  // so 2.25 PFLOPS dense per GPU.
  spec.bf16_flops_per_s = 2250e12;
  // Same: fifth-generation NVLink, 1.8 TB/s per GPU (both directions): 900 GB/s one way.
  spec.nvlink_bytes_per_s = 900e9;
  spec.allreduce_latency_s = 33e-6;  // as the H100 fit: an estimate
  spec.allreduce_bytes_per_s = kAllReduceShareOfLink * spec.nvlink_bytes_per_s;
  // PCIe Gen5 x16 to the host, as the H100 (core/hardware_spec.h): ~50 GB/s measured.
  spec.pcie_bytes_per_s = 50e9;
  return spec;
}

HardwareSpec mi300x_192gb() {
  HardwareSpec spec;
  spec.name = "mi300x-192gb";
  // AMD Instinct MI300X accelerator datasheet: 192 GB HBM3, 5.3 TB/s peak bandwidth.
  spec.hbm_bytes = 192LL * 1000 * 1000 * 1000;
  spec.hbm_bytes_per_s = 5.3e12;
  // Same datasheet: peak BF16 1,307.4 TFLOPS (2,614.9 with structured sparsity; dense used).
  spec.bf16_flops_per_s = 1307.4e12;
  // Same datasheet: 7 Infinity Fabric links of 128 GB/s (both directions) to the other seven
  // GPUs of a node: 896 GB/s, 448 GB/s one way.
  spec.nvlink_bytes_per_s = 448e9;
  spec.allreduce_latency_s = 33e-6;  // as the H100 fit (RCCL not profiled here): an estimate
  spec.allreduce_bytes_per_s = kAllReduceShareOfLink * spec.nvlink_bytes_per_s;
  // Same datasheet: PCIe Gen5 x16 (128 GB/s both directions, 64 one way); ~50 GB/s measured as
  // on the H100's Gen5 host link.
  spec.pcie_bytes_per_s = 50e9;
  return spec;
}

std::optional<HardwareSpec> find_hardware_preset(const std::string& name) {
  for (const HardwarePreset& preset : kHardwarePresets) {
    if (name == preset.name) return preset.make();
  }
  return std::nullopt;
}

std::vector<std::string> hardware_preset_names() {
  std::vector<std::string> names;
  for (const HardwarePreset& preset : kHardwarePresets) names.emplace_back(preset.name);
  return names;
}

}  // namespace gangway
