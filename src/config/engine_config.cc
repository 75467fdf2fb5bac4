#include "config/engine_config.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "config/request_level_setup.h"
#include "kv/kv_layout.h"

namespace gangway {
namespace {

EngineKind read_kind(const YamlValue& value) {
  const std::string text = value.choice({"emulated", "vllm", "sglang", "openai"});
  if (text == "vllm") return EngineKind::kVllm;
  if (text == "sglang") return EngineKind::kSglang;
  if (text == "openai") return EngineKind::kOpenai;
  return EngineKind::kEmulated;
}

std::vector<std::string> model_names_in(const NodeSpec& node) {
  return node.model_names();
}

// The GPUs an engine of `model` runs on: each replica's own, or the whole gang.
std::vector<std::vector<GpuId>> replica_gpus(const ModelSpec& model) {
  if (model.is_large()) return {model.gpus};
  std::vector<std::vector<GpuId>> out;
  for (const GpuId gpu : model.gpus) out.push_back({gpu});
  return out;
}

int engines_on_gpu(const NodeSpec& node, GpuId gpu) {
  int count = 0;
  for (const ModelSpec& model : node.models) {
    count += static_cast<int>(std::count(model.gpus.begin(), model.gpus.end(), gpu));
  }
  return count;
}

// Rounded down to a thousandth, so the shares of one GPU's engines never add up to more than
// the whole GPU.
double floor_thousandths(double share) {
  return std::floor(share * 1000.0) / 1000.0;
}

double memory_share(const NodeSpec& node, const KvLayout& layout, const ModelSpec& model,
                    const std::vector<GpuId>& gpus, EngineKind kind) {
  double lowest = 1.0;
  for (const GpuId gpu : gpus) {
    const GpuMemoryLayout& memory = layout.gpus[gpu.value()];
    double bytes = model.weight_bytes_per_gpu() +
                   static_cast<double>(model.is_large() ? memory.large_kv_bytes
                                                        : memory.small_kv_bytes[model.id.value()]);
    // vLLM's share covers activations too; SGLang's static fraction is weights and KV only.
    if (kind != EngineKind::kSglang) {
      bytes += static_cast<double>(memory.activation_reserve_bytes) / engines_on_gpu(node, gpu);
    }
    lowest = std::min(lowest, bytes / static_cast<double>(memory.hbm_bytes));
  }
  return floor_thousandths(lowest);
}

std::string format_share(double share) {
  char text[16];
  std::snprintf(text, sizeof text, "%.3f", share);
  return text;
}

// {gpu}, {port}, {memory_share} and {model} filled in; any other {NAME} fails at `where`.
std::string fill_launch(const std::string& pattern, const EngineEndpoint& endpoint,
                        const std::string& served_name, const YamlValue& where) {
  std::string out;
  size_t at = 0;
  while (at < pattern.size()) {
    const size_t open = pattern.find('{', at);
    if (open == std::string::npos) {
      out.append(pattern, at);
      break;
    }
    out.append(pattern, at, open - at);
    const size_t close = pattern.find('}', open);
    if (close == std::string::npos) where.fail("a '{' without its '}'");
    const std::string name = pattern.substr(open + 1, close - open - 1);
    if (name == "gpu") {
      std::string gpus;
      for (const GpuId gpu : endpoint.gpus) {
        if (!gpus.empty()) gpus += ',';
        gpus += std::to_string(gpu.value());
      }
      out += gpus;
    } else if (name == "port") {
      out += std::to_string(endpoint.port);
    } else if (name == "memory_share") {
      out += format_share(endpoint.memory_share);
    } else if (name == "model") {
      out += served_name;
    } else {
      where.fail("unknown placeholder {" + name +
                 "}; expected {gpu}, {port}, {memory_share} or {model}");
    }
    at = close + 1;
  }
  return out;
}

ModelEngines read_model_engines(const YamlValue& value, const ModelSpec& model,
                                const NodeSpec& node, const KvLayout& layout) {
  const YamlMap map = value.map({"kind", "urls", "served_model_name", "launch", "environment"});
  ModelEngines engines;
  engines.model = model.id;
  engines.served_model_name = model.name;
  if (const auto v = map.get("kind")) engines.kind = read_kind(*v);
  if (const auto v = map.get("served_model_name")) engines.served_model_name = v->text();
  if (engines.kind == EngineKind::kEmulated) {
    for (const char* key : {"urls", "launch", "environment"}) {
      if (const auto v = map.get(key)) v->fail("not used by kind: emulated");
    }
    return engines;
  }
  const std::vector<std::vector<GpuId>> replicas = replica_gpus(model);
  const YamlValue urls = map.required("urls");
  if (!urls.is_list())
    urls.fail("expected a list of http://HOST:PORT URLs, got " + urls.describe());
  const std::vector<YamlValue> items = urls.list();
  if (items.size() != replicas.size()) {
    urls.fail("expected " + std::to_string(replicas.size()) + " URL" +
              (replicas.size() == 1 ? "" : "s") +
              (model.is_large() ? " (one engine for the large model's gang)"
                                : " (one per replica: one for each GPU in the model's gpus)") +
              ", got " + std::to_string(items.size()));
  }
  const KvLayout& kv = layout;
  for (size_t i = 0; i < items.size(); ++i) {
    EngineEndpoint endpoint;
    endpoint.url = items[i].text();
    if (!parse_engine_url(endpoint.url, endpoint.host, endpoint.port)) {
      items[i].fail("expected http://HOST:PORT (a literal address or a host name, no path), got " +
                    in_quotes(endpoint.url));
    }
    endpoint.gpus = replicas[i];
    endpoint.memory_share = memory_share(node, kv, model, endpoint.gpus, engines.kind);
    const int64_t blocks = model.is_large()
                               ? kv.large_blocks
                               : kv.small_blocks[endpoint.gpus[0].value()][model.id.value()];
    endpoint.kv_capacity_tokens = blocks * node.kv_block_tokens;
    endpoint.max_num_seqs = model.max_num_seqs;
    engines.endpoints.push_back(std::move(endpoint));
  }
  if (const auto v = map.get("launch")) {
    engines.launch_template = v->text();
    for (EngineEndpoint& endpoint : engines.endpoints) {
      endpoint.launch_command =
          fill_launch(engines.launch_template, endpoint, engines.served_model_name, *v);
    }
  }
  if (const auto v = map.get("environment")) {
    if (!v->is_list()) v->fail("expected a list of NAME=VALUE strings, got " + v->describe());
    for (const YamlValue& item : v->list()) {
      const std::string text = item.text();
      const size_t equals = text.find('=');
      if (equals == 0 || equals == std::string::npos) {
        item.fail("expected NAME=VALUE, got " + in_quotes(text));
      }
      engines.environment.push_back(text);
    }
  }
  return engines;
}

}  // namespace

const char* to_string(EngineKind kind) {
  switch (kind) {
    case EngineKind::kEmulated:
      return "emulated";
    case EngineKind::kVllm:
      return "vllm";
    case EngineKind::kSglang:
      return "sglang";
    case EngineKind::kOpenai:
      return "openai";
  }
  return "emulated";
}

bool can_pause(EngineKind kind) {
  return kind == EngineKind::kVllm || kind == EngineKind::kSglang;
}

const char* to_string(EngineTierMode mode) {
  return mode == EngineTierMode::kLease ? "lease" : "exclusive";
}

int64_t engine_count(const EnginesConfig& config) {
  int64_t count = 0;
  for (const ModelEngines& model : config.models)
    count += static_cast<int64_t>(model.endpoints.size());
  return count;
}

bool parse_engine_url(const std::string& url, std::string& host, uint16_t& port) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind(kScheme, 0) != 0) return false;
  std::string rest = url.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  host = rest.substr(0, colon);
  if (host.find_first_of("/?#@ ") != std::string::npos) return false;
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string digits = rest.substr(colon + 1);
  if (digits.empty() || digits.size() > 5 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  const int value = std::stoi(digits);
  if (value < 1 || value > 65535) return false;
  port = static_cast<uint16_t>(value);
  return true;
}

EnginesConfig read_engines(const YamlValue& value, const NodeSpec& node,
                           const SchedulerOptions& scheduler, const PolicySpec& mode_source) {
  const YamlMap map = value.map(model_names_in(node));
  const KvLayout layout = compute_kv_layout(node, scheduler.large_kv_fraction);
  std::vector<ModelEngines> models(node.models.size());
  std::vector<bool> given(node.models.size(), false);
  bool any_real = false;
  std::optional<YamlValue> first_emulated;
  for (const auto& [name, entry] : map.entries()) {
    const ModelSpec& model = node.model(*node.find_model(name));
    models[model.id.value()] = read_model_engines(entry, model, node, layout);
    given[model.id.value()] = true;
    if (models[model.id.value()].kind == EngineKind::kEmulated) {
      if (!first_emulated) first_emulated = entry;
    } else {
      any_real = true;
    }
  }
  EnginesConfig config;
  if (!any_real) return config;  // every model emulated: today's server
  if (first_emulated) {
    first_emulated->fail(
        "kind emulated cannot be mixed with engine processes; expected vllm, sglang or openai "
        "for every model");
  }
  for (const ModelSpec& model : node.models) {
    if (!given[model.id.value()]) {
      value.fail("no engine for model " + in_quotes(model.name) +
                 "; expected an entry for every model of models: (" +
                 join_names(node.model_names()) + ")");
    }
  }
  // One process per address.
  std::set<std::pair<std::string, uint16_t>> seen;
  for (const auto& [name, entry] : map.entries()) {
    const ModelEngines& engines = models[node.find_model(name)->value()];
    const std::vector<YamlValue> urls =
        entry.map({"kind", "urls", "served_model_name", "launch", "environment"})
            .required("urls")
            .list();
    for (size_t i = 0; i < engines.endpoints.size(); ++i) {
      const EngineEndpoint& endpoint = engines.endpoints[i];
      if (!seen.insert({endpoint.host, endpoint.port}).second) {
        urls[i].fail("the address " + in_quotes(endpoint.url) +
                     " is given twice; expected one engine process per URL");
      }
    }
  }
  // The engines of one GPU never take more than all of it (shares are rounded down).
  for (int gpu = 0; gpu < node.gpu_count; ++gpu) {
    double total = 0;
    for (const ModelEngines& engines : models) {
      for (const EngineEndpoint& endpoint : engines.endpoints) {
        if (std::count(endpoint.gpus.begin(), endpoint.gpus.end(),
                       GpuId(static_cast<uint16_t>(gpu))) > 0) {
          total += endpoint.memory_share;
        }
      }
    }
    if (total > 1.0 + 1e-9) {
      value.fail("the engines on GPU " + std::to_string(gpu) + " would take " +
                 format_share(total) + " of its memory; expected at most 1");
    }
  }
  config.models = std::move(models);
  bool all_pause = true;
  for (const ModelEngines& engines : config.models)
    all_pause = all_pause && can_pause(engines.kind);
  config.mode = all_pause && !runs_exclusive(mode_source) ? EngineTierMode::kLease
                                                          : EngineTierMode::kExclusive;
  return config;
}

}  // namespace gangway
