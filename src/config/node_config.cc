#include "config/node_config.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "config/hardware_presets.h"

namespace gangway {
namespace {

constexpr double kGigabyte = 1e9;
constexpr double kGibibyte = 1024.0 * 1024.0 * 1024.0;

HardwareSpec hardware_preset(const YamlValue& value) {
  const std::string name = value.text();
  if (std::optional<HardwareSpec> spec = find_hardware_preset(name)) return *spec;
  value.fail("unknown hardware preset " + in_quotes(name) +
             "; expected one of: " + join_names(hardware_preset_names()));
}

int64_t bytes_from(double amount, double unit) {
  const double bytes = std::round(amount * unit);
  if (bytes >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
    return std::numeric_limits<int64_t>::max();
  }
  return static_cast<int64_t>(bytes);
}

}  // namespace

HardwareSpec read_hardware(const YamlValue& value) {
  if (value.is_scalar()) return hardware_preset(value);
  const YamlMap map =
      value.map({"preset", "hbm_gb", "hbm_tb_per_s", "bf16_tflops", "nvlink_gb_per_s",
                 "allreduce_latency_us", "allreduce_gb_per_s", "pcie_gb_per_s"});
  HardwareSpec spec = h100_sxm_80gb();
  if (const auto preset = map.get("preset")) spec = hardware_preset(*preset);
  bool overridden = false;
  const auto positive = [&](const char* key, double unit, double& field) {
    if (const auto figure = map.get(key)) {
      field = figure->positive_number() * unit;
      overridden = true;
    }
  };
  if (const auto hbm = map.get("hbm_gb")) {
    spec.hbm_bytes = bytes_from(hbm->positive_number(), kGigabyte);
    overridden = true;
  }
  positive("hbm_tb_per_s", 1e12, spec.hbm_bytes_per_s);
  positive("bf16_tflops", 1e12, spec.bf16_flops_per_s);
  positive("nvlink_gb_per_s", kGigabyte, spec.nvlink_bytes_per_s);
  if (const auto latency = map.get("allreduce_latency_us")) {
    spec.allreduce_latency_s = latency->non_negative_number() * 1e-6;
    overridden = true;
  }
  positive("allreduce_gb_per_s", kGigabyte, spec.allreduce_bytes_per_s);
  positive("pcie_gb_per_s", kGigabyte, spec.pcie_bytes_per_s);
  if (overridden) spec.name += "-custom";
  return spec;
}

void read_node_section(const YamlValue& value, NodeSpec& node) {
  node.hardware = h100_sxm_80gb();
  const YamlMap map = value.map(
      {"gpus", "hardware", "host_memory_gib", "activation_reserve_gb", "kv_block_tokens"});
  if (const auto gpus = map.get("gpus")) {
    node.gpu_count =
        static_cast<int32_t>(gpus->integer_in(1, std::numeric_limits<GpuId::rep_type>::max()));
  }
  if (const auto hardware = map.get("hardware")) node.hardware = read_hardware(*hardware);
  if (const auto host = map.get("host_memory_gib")) {
    node.host_memory_bytes = bytes_from(host->non_negative_number(), kGibibyte);
  }
  if (const auto reserve = map.get("activation_reserve_gb")) {
    node.activation_reserve_bytes = bytes_from(reserve->non_negative_number(), kGigabyte);
  }
  if (const auto block = map.get("kv_block_tokens")) {
    node.kv_block_tokens = block->int32_at_least(1);
  }
}

}  // namespace gangway
