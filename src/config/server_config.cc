#include "config/server_config.h"

#include <algorithm>
#include <limits>

#include "config/length_config.h"

namespace gangway {
namespace {

constexpr int64_t kKib = 1024;

Duration read_seconds(const YamlValue& value) {
  const Duration duration = seconds_to_duration(value.positive_number());
  if (duration < std::chrono::milliseconds(1)) value.fail("expected at least 0.001 s");
  return duration;
}

EmulatedOutputSpec read_emulated_output(const YamlValue& value, const std::string& scenario_path) {
  EmulatedOutputSpec spec;
  if (value.is_scalar() && !value.is_null()) {
    const std::string text = value.text();
    if (text == "workload") {
      spec.kind = EmulatedOutputSpec::Kind::kWorkload;
      return spec;
    }
    if (text == "max_tokens") {
      spec.kind = EmulatedOutputSpec::Kind::kMaxTokens;
      return spec;
    }
  }
  if (!value.is_map() && !value.is_scalar()) {
    value.fail(
        "expected workload, max_tokens, a whole number of tokens or a length "
        "distribution mapping, got " +
        value.describe());
  }
  if (value.is_scalar()) {
    // A bare number is a constant length; any other word is a mistake.
    try {
      (void)value.integer();
    } catch (const InputError&) {
      value.fail(
          "expected workload, max_tokens, a whole number of tokens or a length "
          "distribution mapping, got " +
          value.describe());
    }
  }
  spec.kind = EmulatedOutputSpec::Kind::kLength;
  spec.length = read_length(value, TraceLengthColumn::output, scenario_path);
  value.document().run_located([&] { validate(spec.length, "", value.path()); });
  return spec;
}

}  // namespace

std::string_view to_string(SchedulerThread where) {
  return where == SchedulerThread::kShared ? "shared" : "own";
}

std::optional<SchedulerThread> scheduler_thread_from_name(std::string_view name) {
  if (name == "own") return SchedulerThread::kOwn;
  if (name == "shared") return SchedulerThread::kShared;
  return std::nullopt;
}

bool is_log_level(const std::string& name) {
  return name == "debug" || name == "info" || name == "warn" || name == "error";
}

ServerConfig read_server_section(const YamlValue& value, const NodeSpec& node,
                                 const std::string& scenario_path,
                                 const SchedulerOptions& scheduler, const PolicySpec& policy) {
  const YamlMap map = value.map({"host",
                                 "port",
                                 "agent_port",
                                 "network_threads",
                                 "scheduler_thread",
                                 "max_connections",
                                 "max_connections_per_client",
                                 "probe_reserve_connections",
                                 "max_header_kib",
                                 "max_body_kib",
                                 "max_json_depth",
                                 "header_timeout_s",
                                 "read_timeout_s",
                                 "write_stall_timeout_s",
                                 "max_output_buffer_kib",
                                 "socket_send_buffer_kib",
                                 "stream_interval_tokens",
                                 "drain_grace_s",
                                 "scheduler_stall_s",
                                 "default_slo_class",
                                 "emulated_output_tokens",
                                 "log_level",
                                 "engines",
                                 "engine_idle_timeout_s",
                                 "engine_control_timeout_s",
                                 "engine_health_interval_s",
                                 "engine_pause_latency_s",
                                 "engine_resume_latency_s"});
  ServerConfig config;
  if (const auto v = map.get("host")) config.host = v->text();
  if (const auto v = map.get("port")) config.port = static_cast<uint16_t>(v->integer_in(0, 65535));
  if (const auto v = map.get("agent_port")) {
    config.agent_port = static_cast<uint16_t>(v->integer_in(1, 65535));
    if (*config.agent_port == config.port) {
      v->fail("the agent-check port must differ from server.port (" + std::to_string(config.port) +
              ")");
    }
  }
  if (const auto v = map.get("network_threads")) {
    config.network_threads = static_cast<int32_t>(v->integer_in(1, 64));
  }
  if (const auto v = map.get("scheduler_thread")) {
    config.scheduler_thread = *scheduler_thread_from_name(v->choice({"own", "shared"}));
  }
  if (const auto v = map.get("max_connections")) {
    config.max_connections = static_cast<int32_t>(v->integer_in(1, 1000000));
  }
  if (const auto v = map.get("max_connections_per_client")) {
    config.max_connections_per_client = static_cast<int32_t>(v->integer_in(1, 1000000));
  }
  if (const auto v = map.get("probe_reserve_connections")) {
    config.probe_reserve_connections = static_cast<int32_t>(v->integer_in(0, 10000));
  }
  if (const auto v = map.get("max_json_depth")) {
    config.max_json_depth = static_cast<int32_t>(v->integer_in(2, 10000));
  }
  if (const auto v = map.get("header_timeout_s")) config.header_timeout = read_seconds(*v);
  if (const auto v = map.get("max_header_kib")) {
    config.max_header_bytes = v->integer_in(1, 1024) * kKib;
  }
  if (const auto v = map.get("max_body_kib")) {
    config.max_body_bytes = v->integer_in(1, 1024 * 1024) * kKib;
  }
  if (const auto v = map.get("read_timeout_s")) config.read_timeout = read_seconds(*v);
  if (const auto v = map.get("write_stall_timeout_s"))
    config.write_stall_timeout = read_seconds(*v);
  if (const auto v = map.get("max_output_buffer_kib")) {
    config.max_output_buffer_bytes = v->integer_in(4, 1024 * 1024) * kKib;
  }
  if (const auto v = map.get("socket_send_buffer_kib")) {
    config.socket_send_buffer_bytes = v->integer_in(4, 64 * 1024) * kKib;
  }
  if (const auto v = map.get("stream_interval_tokens")) {
    config.stream_interval_tokens = static_cast<int32_t>(v->integer_in(1, 1024));
  }
  if (const auto v = map.get("drain_grace_s")) {
    config.drain_grace = seconds_to_duration(v->non_negative_number());
  }
  if (const auto v = map.get("scheduler_stall_s")) {
    config.scheduler_stall_limit = seconds_to_duration(v->non_negative_number());
  }
  if (const auto v = map.get("default_slo_class")) {
    config.default_slo_class = v->text();
    if (!node.find_slo_class(config.default_slo_class)) {
      v->fail("unknown SLO class " + in_quotes(config.default_slo_class) +
              "; expected one of: " + join_names(node.slo_class_names()));
    }
  }
  if (const auto v = map.get("emulated_output_tokens")) {
    config.emulated_output = read_emulated_output(*v, scenario_path);
  }
  if (const auto v = map.get("log_level")) {
    config.log_level = v->choice({"debug", "info", "warn", "error"});
  }
  if (const auto v = map.get("engines")) {
    config.engines = read_engines(*v, node, scheduler, policy);
  }
  if (const auto v = map.get("engine_idle_timeout_s")) {
    config.engines.idle_timeout = read_seconds(*v);
  }
  if (const auto v = map.get("engine_control_timeout_s")) {
    config.engines.control_timeout = read_seconds(*v);
  }
  if (const auto v = map.get("engine_health_interval_s")) {
    config.engines.health_interval = read_seconds(*v);
  }
  if (const auto v = map.get("engine_pause_latency_s")) {
    config.engines.simulated_pause_latency = seconds_to_duration(v->number_in(0, 10, false, false));
  }
  if (const auto v = map.get("engine_resume_latency_s")) {
    config.engines.simulated_resume_latency =
        seconds_to_duration(v->number_in(0, 10, false, false));
  }
  // The headers' time is part of the whole request's.
  config.header_timeout = std::min(config.header_timeout, config.read_timeout);
  return config;
}

}  // namespace gangway
