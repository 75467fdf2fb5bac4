// The GPU and interconnect figures of one node, as plain data. The cost model turns them into
// iteration times; the KV layer into pool sizes and swap times. Defaults are an H100 SXM 80 GB
// node; each figure names its public source so that a reader can check or replace it.
#pragma once

#include <cstdint>
#include <string>

#include "core/roofline_efficiencies.h"

namespace gangway {

struct HardwareSpec {
  std::string name;
  // HBM per GPU. Source: NVIDIA H100 SXM datasheet ("80 GB").
  int64_t hbm_bytes = 0;
  // Peak HBM bandwidth per GPU. Source: NVIDIA H100 SXM datasheet (3.35 TB/s).
  double hbm_bytes_per_s = 0;
  // Dense bf16 tensor peak per GPU. Source: NVIDIA H100 SXM datasheet (989 TFLOPS, no sparsity).
  double bf16_flops_per_s = 0;
  // NVLink one-way bandwidth per GPU. Source: NVIDIA datasheet (900 GB/s both ways); measured
  // p2p ~376-380 GB/s one way (NVIDIA/nccl issue 1264).
  double nvlink_bytes_per_s = 0;
  // TP=8 all-reduce as latency + bytes / bandwidth, fitted to Vidur's NCCL profile of a DGX H100
  // (~33 us for 2 KB-2 MB, 0.11 ms at 16 MB, 0.34 ms at 65 MB -> ~210 GB/s algorithm bandwidth).
  double allreduce_latency_s = 0;
  double allreduce_bytes_per_s = 0;
  // Host<->GPU copy bandwidth for KV swap, one direction. Source: vLLM offloading-connector blog,
  // Dec 2025 (PCIe Gen5 x16 nominal 64 GB/s; measured DMA ~50 GB/s for 0.5-2 MB blocks).
  double pcie_bytes_per_s = 0;
  // The roofline efficiencies that reproduce this GPU's reference iteration time: what a model's
  // roofline cost settings default to on this GPU (ModelSpec's default_cost_model).
  RooflineEfficiencies roofline_efficiencies;
};

// The default: one H100 SXM 80 GB as described above. Its roofline efficiencies are
// RooflineEfficiencies' defaults, which reproduce the published vLLM V1 figures on this GPU.
HardwareSpec h100_sxm_80gb();
// An H200 SXM 141 GB (NVIDIA datasheet: 141 GB HBM3e, 4.8 TB/s; same compute as H100). Its
// roofline efficiencies are the fit to the Llama-3-8B iteration times measured on one H200
// (docs/calibration.md: compute 0.5, bandwidth 0.57, 1.1 ms per iteration; 41 batch shapes,
// measured / predicted 1.00 geomean against 1.32 with the H100's settings).
HardwareSpec h200_sxm_141gb();

}  // namespace gangway
