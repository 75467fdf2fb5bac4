// Prints the roofline cost model's prediction for each batch shape in a GPU timing file
// (scripts/calibration/gpu_iteration_times.py writes one), so that scripts/calibration/compare.py
// can set measured and predicted iteration times side by side (docs/calibration.md).
//
//   gangway_cost_table TIMINGS.json [--hardware h100|h200] [--compute-efficiency X]
//                      [--bandwidth-efficiency X] [--launch-overhead-s X]
//                      [--linear BASE_S,PER_PREFILL_TOKEN_S,PER_DECODE_SEQ_S,PER_KV_TOKEN_S]
//
// The model is default_node_spec()'s small model (Llama-3-8B at TP=1, with the default node's
// cost settings: the H100 preset's efficiencies, on either GPU) on the chosen GPU (default h200,
// the GPU the timings came from); each option replaces one cost setting, to see what a
// recommended value would predict (the H200 preset's own are the fitted ones). Output: JSON on
// stdout, one entry per input shape with the BatchShape fields, the prediction and the
// roofline's terms.
// Predictions come from make_cost_model (the code the simulator runs; --linear switches it to
// the linear model with those coefficients); the terms are always the roofline's, from
// RooflineCostModel::breakdown at the roofline settings.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "core/hardware_spec.h"
#include "core/model_spec.h"
#include "core/node_spec.h"
#include "core/time.h"
#include "model/cost_model.h"
#include "model/linear_cost_model.h"
#include "model/roofline_cost_model.h"

namespace {

using gangway::BatchShape;
using nlohmann::json;

int usage() {
  std::cerr << "usage: gangway_cost_table TIMINGS.json [--hardware h100|h200] "
               "[--compute-efficiency X] [--bandwidth-efficiency X] [--launch-overhead-s X] "
               "[--linear BASE_S,PREFILL_TOKEN_S,DECODE_SEQ_S,KV_TOKEN_S]\n";
  return 2;
}

int run(int argc, char** argv) {
  if (argc < 2) return usage();
  gangway::ModelSpec spec;
  bool found = false;
  for (const gangway::ModelSpec& m : gangway::default_node_spec().models) {
    if (!m.is_large()) {
      spec = m;
      found = true;
      break;
    }
  }
  if (!found) throw std::runtime_error("default_node_spec() has no small model");
  gangway::HardwareSpec hardware = gangway::h200_sxm_141gb();
  for (int i = 2; i < argc; i += 2) {
    const std::string key = argv[i];
    if (i + 1 >= argc) return usage();
    const std::string value = argv[i + 1];
    if (key == "--hardware") {
      if (value == "h100") {
        hardware = gangway::h100_sxm_80gb();
      } else if (value == "h200") {
        hardware = gangway::h200_sxm_141gb();
      } else {
        return usage();
      }
    } else if (key == "--compute-efficiency") {
      spec.cost.compute_efficiency = std::stod(value);
    } else if (key == "--bandwidth-efficiency") {
      spec.cost.bandwidth_efficiency = std::stod(value);
    } else if (key == "--launch-overhead-s") {
      spec.cost.launch_overhead_s = std::stod(value);
    } else if (key == "--linear") {
      // BASE_S,PER_PREFILL_TOKEN_S,PER_DECODE_SEQ_S,PER_KV_TOKEN_S: predict with the linear model.
      gangway::LinearCostCoefficients c;
      if (std::sscanf(value.c_str(), "%lf,%lf,%lf,%lf", &c.base_s, &c.per_prefill_token_s,
                      &c.per_decode_seq_s, &c.per_kv_token_s) != 4) {
        return usage();
      }
      c.write_to(spec.cost);
    } else {
      return usage();
    }
  }
  gangway::validate_cost_model_inputs(spec, hardware);
  const auto cost = gangway::make_cost_model(spec, hardware);
  const gangway::RooflineCostModel roofline(spec, hardware);

  std::ifstream in(argv[1]);
  if (!in) throw std::runtime_error(std::string("cannot read ") + argv[1]);
  const json timings = json::parse(in);

  json out;
  out["model"] = spec.shape.name;
  out["tensor_parallel"] = spec.tensor_parallel;
  out["hardware"] = hardware.name;
  out["compute_efficiency"] = spec.cost.compute_efficiency;
  out["bandwidth_efficiency"] = spec.cost.bandwidth_efficiency;
  out["launch_overhead_s"] = spec.cost.launch_overhead_s;
  out["cost_model"] = gangway::to_string(spec.cost.kind);
  out["shapes"] = json::array();
  for (const json& row : timings.at("shapes")) {
    BatchShape batch;
    batch.prefill_tokens = row.at("prefill_tokens").get<int32_t>();
    batch.prefill_seqs = row.at("prefill_seqs").get<int32_t>();
    batch.prefill_context_tokens = row.at("prefill_context_tokens").get<int64_t>();
    batch.decode_seqs = row.at("decode_seqs").get<int32_t>();
    batch.decode_context_tokens = row.at("decode_context_tokens").get<int64_t>();
    if (!gangway::is_valid_batch_shape(batch)) gangway::check_batch_shape(batch);
    const auto parts = roofline.breakdown(batch);
    json entry;
    entry["prefill_tokens"] = batch.prefill_tokens;
    entry["prefill_seqs"] = batch.prefill_seqs;
    entry["prefill_context_tokens"] = batch.prefill_context_tokens;
    entry["decode_seqs"] = batch.decode_seqs;
    entry["decode_context_tokens"] = batch.decode_context_tokens;
    entry["predicted_ms"] = gangway::to_ms(cost->iteration_time(batch));
    entry["launch_ms"] = parts.launch_overhead_s * 1e3;
    entry["compute_ms"] = parts.compute_s * 1e3;
    entry["memory_ms"] = parts.memory_s * 1e3;
    entry["compute_bound"] = parts.compute_bound();
    out["shapes"].push_back(entry);
  }
  std::cout << out.dump(1) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "gangway_cost_table: " << e.what() << "\n";
    return 1;
  }
}
