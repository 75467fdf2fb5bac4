// GET /metrics: the engine's state in Prometheus text format, under the names vLLM's
// PrometheusStatLogger gives them (labels model_name and engine="0"):
//   vllm:num_requests_running, vllm:num_requests_waiting, vllm:kv_cache_usage_perc (gauges),
//   vllm:num_preemptions_total, vllm:prompt_tokens_total, vllm:generation_tokens_total,
//   vllm:request_success_total{finished_reason=...} (counters),
//   vllm:cache_config_info{block_size, num_gpu_blocks} (an info gauge, value 1).
#pragma once

#include <string>

#include "batching/continuous_batching_engine.h"

namespace gangway {

std::string render_engine_metrics(const ContinuousBatchingEngine& engine,
                                  const std::string& model_name);

}  // namespace gangway
