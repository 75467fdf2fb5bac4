#include "test_engine/engine_metrics.h"

#include <fmt/format.h>

namespace gangway {
namespace {

void metric(std::string& out, const char* name, const char* type, const char* help,
            const std::string& labels, double value) {
  fmt::format_to(std::back_inserter(out), "# HELP {0} {1}\n# TYPE {0} {2}\n{0}{{{3}}} {4:.6g}\n",
                 name, help, type, labels, value);
}

}  // namespace

std::string render_engine_metrics(const ContinuousBatchingEngine& engine,
                                  const std::string& model_name) {
  // Model names come from presets or a scenario: no quotes or backslashes to escape.
  const std::string labels = fmt::format(R"(engine="0",model_name="{}")", model_name);
  const auto& counters = engine.counters();
  std::string out;
  out.reserve(2048);
  metric(out, "vllm:num_requests_running", "gauge",
         "Number of requests in model execution batches.", labels,
         static_cast<double>(engine.running()));
  metric(out, "vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
         labels, static_cast<double>(engine.waiting()));
  metric(out, "vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.",
         labels, engine.kv_usage());
  metric(out, "vllm:num_preemptions_total", "counter",
         "Cumulative number of preemption from the engine.", labels,
         static_cast<double>(counters.preemptions));
  metric(out, "vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", labels,
         static_cast<double>(counters.prompt_tokens));
  metric(out, "vllm:generation_tokens_total", "counter", "Number of generation tokens processed.",
         labels, static_cast<double>(counters.generation_tokens));
  out.append(
      "# HELP vllm:request_success_total Count of successfully processed requests.\n"
      "# TYPE vllm:request_success_total counter\n");
  for (const FinishReason reason :
       {FinishReason::kStop, FinishReason::kLength, FinishReason::kAbort}) {
    fmt::format_to(std::back_inserter(out),
                   "vllm:request_success_total{{{},finished_reason=\"{}\"}} {}\n", labels,
                   to_string(reason), counters.finished[static_cast<size_t>(reason)]);
  }
  fmt::format_to(std::back_inserter(out),
                 "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
                 "# TYPE vllm:cache_config_info gauge\n"
                 "vllm:cache_config_info{{block_size=\"{}\",engine=\"0\",num_gpu_blocks=\"{}\"}} "
                 "1\n",
                 engine.limits().block_tokens, engine.limits().kv_blocks);
  return out;
}

}  // namespace gangway
