#include "config/hardware_presets.h"

#include <cstdint>

namespace gangway {
namespace {

// The H100 fit's all-reduce algorithm bandwidth per unit of one-way link bandwidth (210 GB/s
// over 450 GB/s, core/hardware_spec.h). For GPUs without a public TP=8 collective profile the
// all-reduce bandwidth is this share of their link bandwidth, and its latency the H100 fit's
// (NVSwitch, NCCL): estimates, to be replaced by a measurement (node.hardware.allreduce_gb_per_s).
constexpr double kAllReduceShareOfLink = 210.0 / 450.0;
constexpr double kEstimatedAllReduceLatencyS = 33e-6;

// A GPU as its datasheet gives it. Bandwidths are one way; compute is dense (no sparsity).
struct DatasheetRow {
  const char* name;
  int64_t hbm_gb;
  double hbm_bytes_per_s;
  double bf16_flops_per_s;
  double link_bytes_per_s;  // GPU-to-GPU (NVLink, Infinity Fabric)
  double pcie_bytes_per_s;  // host copies
};

// Sources, one row each:
// - a100-sxm-80gb: NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM): 80 GB HBM2e,
//   2,039 GB/s; BF16 Tensor Core 312 TFLOPS (624 with sparsity); NVLink 600 GB/s both
//   directions; PCIe Gen4 64 GB/s both directions, 32 one way nominal, of which host copies
//   reach ~25 GB/s (about 80 %, as Gen5's 50 of 64 GB/s, core/hardware_spec.h).
// - b200-sxm-180gb: NVIDIA DGX B200 datasheet: 8 GPUs with 1,440 GB of HBM3e (180 GB each) and
//   64 TB/s of HBM bandwidth (8 TB/s each); NVIDIA HGX B200 specifications: FP16/BF16 Tensor
//   Core 36 PFLOPS for 8 GPUs with sparsity, so 2.25 PFLOPS dense per GPU; fifth-generation
//   NVLink, 1.8 TB/s per GPU both directions; PCIe Gen5 x16 to the host, ~50 GB/s measured as on
//   the H100.
// - mi300x-192gb: AMD Instinct MI300X accelerator datasheet: 192 GB HBM3, 5.3 TB/s peak; peak
//   BF16 1,307.4 TFLOPS (2,614.9 with structured sparsity); 7 Infinity Fabric links of 128 GB/s
//   both directions to the other seven GPUs of a node (896 GB/s, 448 one way); PCIe Gen5 x16,
//   ~50 GB/s measured as on the H100's Gen5 host link (RCCL not profiled here).
constexpr DatasheetRow kDatasheetRows[] = {
    {"a100-sxm-80gb", 80, 2.039e12, 312e12, 300e9, 25e9},
    {"b200-sxm-180gb", 180, 8e12, 2250e12, 900e9, 50e9},
    {"mi300x-192gb", 192, 5.3e12, 1307.4e12, 448e9, 50e9},
};

HardwareSpec from_datasheet(const DatasheetRow& row) {
  HardwareSpec spec;
  spec.name = row.name;
  spec.hbm_bytes = row.hbm_gb * 1000 * 1000 * 1000;
  spec.hbm_bytes_per_s = row.hbm_bytes_per_s;
  spec.bf16_flops_per_s = row.bf16_flops_per_s;
  spec.nvlink_bytes_per_s = row.link_bytes_per_s;
  spec.allreduce_latency_s = kEstimatedAllReduceLatencyS;
  spec.allreduce_bytes_per_s = kAllReduceShareOfLink * spec.nvlink_bytes_per_s;
  spec.pcie_bytes_per_s = row.pcie_bytes_per_s;
  // No iteration time has been measured on these GPUs: the roofline efficiencies stay
  // RooflineEfficiencies' defaults (a vLLM-class engine on an H100), an assumption that a
  // measurement should replace (docs/calibration.md, "What to set").
  spec.roofline_efficiencies = RooflineEfficiencies{};
  return spec;
}

// Every preset, in the order hardware_preset_names() lists them. h100-sxm-80gb and
// h200-sxm-141gb are in core/hardware_spec.cc (the default node's GPU, with its sources).
struct HardwarePreset {
  const char* name;
  HardwareSpec (*make)();   // for the presets of core/hardware_spec.cc
  const DatasheetRow* row;  // for the rows above
};
constexpr HardwarePreset kHardwarePresets[] = {
    {"a100-sxm-80gb", nullptr, &kDatasheetRows[0]}, {"h100-sxm-80gb", &h100_sxm_80gb, nullptr},
    {"h200-sxm-141gb", &h200_sxm_141gb, nullptr},   {"b200-sxm-180gb", nullptr, &kDatasheetRows[1]},
    {"mi300x-192gb", nullptr, &kDatasheetRows[2]},
};

}  // namespace

std::optional<HardwareSpec> find_hardware_preset(const std::string& name) {
  for (const HardwarePreset& preset : kHardwarePresets) {
    if (name != preset.name) continue;
    return preset.make != nullptr ? preset.make() : from_datasheet(*preset.row);
  }
  return std::nullopt;
}

std::vector<std::string> hardware_preset_names() {
  std::vector<std::string> names;
  for (const HardwarePreset& preset : kHardwarePresets) names.emplace_back(preset.name);
  return names;
}

}  // namespace gangway
