// The `server.engines:` section: which engine processes serve each model when `gangway serve`
// runs in front of real engines (vLLM, SGLang, any OpenAI-compatible server) instead of its
// emulated GPUs, and the memory share each engine may take of its GPU.
//
// Without the section (or with every model's kind `emulated`) the server runs its emulated GPUs
// exactly as before. With it, every model names one engine per replica: a small model one URL per
// GPU it is placed on (in the order of its `gpus:`), the large model one URL for its TP engine.
// docs/engines.md documents every key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/yaml_reader.h"
#include "core/ids.h"
#include "core/node_spec.h"
#include "core/time.h"
#include "sched/policy_spec.h"
#include "sched/scheduler_options.h"

namespace gangway {

enum class EngineKind : uint8_t { kEmulated, kVllm, kSglang, kOpenai };

const char* to_string(EngineKind kind);
// vLLM (POST /pause, /resume in its dev mode) and SGLang (/pause_generation,
// /continue_generation) can hold their requests with KV kept; a plain OpenAI server cannot.
bool can_pause(EngineKind kind);

// How the engines' tiers share the GPUs: `lease` pauses one tier's engines (KV kept) while the
// other holds the GPUs; `exclusive` only gates dispatch (no request of one tier starts while the
// other's run). Lease needs engines that can pause.
enum class EngineTierMode : uint8_t { kLease, kExclusive };

const char* to_string(EngineTierMode mode);

// One engine process: where it listens and how much of its GPU memory it may take.
struct EngineEndpoint {
  std::string url;  // as written: http://HOST:PORT
  std::string host;
  uint16_t port = 0;
  // GPUs it runs on (one for a small-model replica, the gang for the large model).
  std::vector<GpuId> gpus;
  // The fraction of each GPU's memory this engine may take: vLLM's --gpu-memory-utilization
  // (weights, activations and KV) or SGLang's --mem-fraction-static (weights and KV), from
  // gangway's own KV layout so that the engines on one GPU add up to at most all of it.
  double memory_share = 0;
  // Requests it holds at once (KV capacity in tokens and the model's max_num_seqs).
  int64_t kv_capacity_tokens = 0;
  int32_t max_num_seqs = 0;
  // The launch template with {gpu}, {port}, {memory_share} and {model} filled in; empty
  // without one (the engine is attached to, not launched: server/engine_launch.h).
  std::string launch_command;
};

struct ModelEngines {
  ModelId model;
  EngineKind kind = EngineKind::kEmulated;
  // The name the engine serves the model under (vLLM's --served-model-name); the model's name
  // by default.
  std::string served_model_name;
  std::vector<EngineEndpoint> endpoints;  // small: one per GPU of `gpus:`; large: one
  std::string launch_template;
  std::vector<std::string> environment;  // NAME=VALUE for a launched engine
};

struct EnginesConfig {
  // By ModelId value; empty: the emulated GPUs.
  std::vector<ModelEngines> models;
  EngineTierMode mode = EngineTierMode::kExclusive;
  // A request whose engine sends nothing (no header, no chunk) for this long fails.
  Duration idle_timeout = std::chrono::seconds(30);
  // A pause, resume or health call must answer within this, else the engine counts as failed.
  Duration control_timeout = std::chrono::seconds(5);
  // How often each engine's /health is polled (a failed engine is polled until it answers).
  Duration health_interval = std::chrono::seconds(1);
  // `gangway simulate` only: how long an engine takes to answer a pause call once its iteration
  // in flight has ended, and a resume call (sim/request_level_simulator.h has the defaults'
  // origin).
  Duration simulated_pause_latency = std::chrono::microseconds(800);
  Duration simulated_resume_latency = std::chrono::microseconds(800);

  bool real() const { return !models.empty(); }
};

// Reads `server.engines` (a mapping from model name to {kind, urls, served_model_name, launch,
// environment}) and fills in each engine's memory share and capacity. Throws InputError naming
// the field for anything malformed or inconsistent. `mode_source` is the scenario's policy: its
// `mode: exclusive` (or any engine that cannot pause) gives exclusive mode, else lease.
EnginesConfig read_engines(const YamlValue& value, const NodeSpec& node,
                           const SchedulerOptions& scheduler, const PolicySpec& mode_source);

// Engine processes in all (0: the emulated GPUs).
int64_t engine_count(const EnginesConfig& config);

// "http://HOST:PORT" (an optional trailing slash) into host and port; false if it is not one.
bool parse_engine_url(const std::string& url, std::string& host, uint16_t& port);

}  // namespace gangway
