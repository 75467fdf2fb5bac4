#include "cli/serve_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>

#include "cli/run_warnings.h"
#include "cli/workload_overrides.h"
#include "config/scenario.h"
#include "core/input_error.h"
#include "engine/engine_supervisor.h"
#include "sched/policy_registry.h"
#include "server/engine_launch.h"
#include "server/http_server.h"
#include "server/log.h"

namespace gangway {

namespace {

// With no scenario file: the default node (8 x H100, Llama-3-8B on every GPU beside Llama-3-70B
// at TP=8), the default classes, one tenant, the default policy (gangway in lease mode,
// default_policy_spec()), and no workload (emulated output lengths then come from the fallback
// distribution, see docs/server.md).
Scenario default_scenario() {
  Scenario scenario;
  scenario.name = "default-node";
  scenario.node = default_node_spec();
  scenario.tenants = {"default"};
  return scenario;
}

void apply_serve_overrides(const ServeOptions& options, Scenario& scenario) {
  ServerConfig& server = scenario.server;
  if (options.host) server.host = *options.host;
  if (options.port) {
    if (*options.port < 0 || *options.port > 65535) {
      throw InputError::at("", std::nullopt, "--port", "expected a port from 0 to 65535");
    }
    server.port = static_cast<uint16_t>(*options.port);
  }
  if (options.agent_port) {
    if (*options.agent_port < 1 || *options.agent_port > 65535) {
      throw InputError::at("", std::nullopt, "--agent-port", "expected a port from 1 to 65535");
    }
    server.agent_port = static_cast<uint16_t>(*options.agent_port);
  }
  if (server.agent_port && *server.agent_port == server.port) {
    throw InputError::at("", std::nullopt,
                         options.agent_port ? "--agent-port" : "server.agent_port",
                         "the agent-check port must differ from the HTTP port (" +
                             std::to_string(server.port) + ")");
  }
  if (options.network_threads) {
    if (*options.network_threads < 1 || *options.network_threads > 64) {
      throw InputError::at("", std::nullopt, "--network-threads", "expected 1 to 64");
    }
    server.network_threads = *options.network_threads;
  }
  if (options.scheduler_thread) {
    const auto where = scheduler_thread_from_name(*options.scheduler_thread);
    if (!where) {
      throw InputError::at("", std::nullopt, "--scheduler-thread",
                           "expected own or shared, got '" + *options.scheduler_thread + "'");
    }
    server.scheduler_thread = *where;
  }
  if (options.drain_grace_s) {
    if (!(*options.drain_grace_s >= 0)) {
      throw InputError::at("", std::nullopt, "--drain-grace", "expected seconds >= 0");
    }
    server.drain_grace = seconds_to_duration(*options.drain_grace_s);
  }
  if (options.read_timeout_s) {
    if (!(*options.read_timeout_s >= 0.001)) {
      throw InputError::at("", std::nullopt, "--read-timeout", "expected seconds >= 0.001");
    }
    server.read_timeout = seconds_to_duration(*options.read_timeout_s);
  }
  if (options.stream_interval_tokens) {
    if (*options.stream_interval_tokens < 1 || *options.stream_interval_tokens > 1024) {
      throw InputError::at("", std::nullopt, "--stream-interval", "expected 1 to 1024 tokens");
    }
    server.stream_interval_tokens = *options.stream_interval_tokens;
  }
  if (options.log_level) {
    if (!is_log_level(*options.log_level)) {
      throw InputError::at("", std::nullopt, "--log-level",
                           "expected debug, info, warn or error, got '" + *options.log_level + "'");
    }
    server.log_level = *options.log_level;
  }
  if (options.policy) {
    PolicySpec spec = scenario.policy;
    spec.name = *options.policy;
    validate_policy_spec(spec);
    scenario.policy = spec;
  }
}

}  // namespace

CLI::App* add_serve_command(CLI::App& app, ServeOptions& options) {
  CLI::App* command = app.add_subcommand(
      "serve",
      "Serve the OpenAI-compatible API (completions, chat, models, health, metrics, load) over "
      "8 emulated GPUs, scheduled by the same core as the simulator, or in front of engine "
      "processes (server.engines: vLLM, SGLang, any OpenAI server); SIGTERM drains and exits 0");
  command->add_option("config", options.scenario_path,
                      "Scenario YAML (node, models, classes, policy, and a server: section; see "
                      "docs/server.md). Default: the default node");
  add_set_option(*command, options.settings);
  command->add_option("--host", options.host, "Address to listen on (default 127.0.0.1)");
  command->add_option("--port", options.port,
                      "Port to listen on; 0 picks a free one (default 8000)");
  command->add_option("--agent-port", options.agent_port,
                      "Answer HAProxy's agent check on this port (docs/cluster.md)");
  command->add_option("--network-threads", options.network_threads,
                      "Threads for HTTP connections (default 1)");
  command->add_option("--scheduler-thread", options.scheduler_thread,
                      "own: the scheduler core runs on a thread of its own (default); shared: on "
                      "network thread 0, for less CPU per request");
  command->add_option(
      "--policy", options.policy,
      "Gang policy (default: the scenario's, else gangway in lease mode): " + [] {
        std::string names;
        for (const std::string& name : policy_names()) {
          names += (names.empty() ? "" : ", ") + name;
        }
        return names;
      }());
  command->add_option("--drain-grace", options.drain_grace_s,
                      "Seconds requests in flight may run after SIGTERM (default 30)");
  command->add_option("--read-timeout", options.read_timeout_s,
                      "Seconds a whole request may take to arrive (default 15)");
  command->add_option("--stream-interval", options.stream_interval_tokens,
                      "Write a stream's tokens after the first every N tokens (default 1)");
  command->add_option("--log-level", options.log_level,
                      "debug, info, warn or error (default info)");
  command->add_option("--port-file", options.port_file,
                      "Write the bound port to this file once listening (for scripts and tests)");
  command->footer(
      "Examples:\n"
      "  gangway serve examples/serve.yaml --port 8000\n"
      "  gangway serve examples/serve.yaml --set policy.lease_max_ms=100 --log-level warn");
  return command;
}

int run_serve(const ServeOptions& options, std::ostream& err) {
  Scenario scenario;
  std::unique_ptr<Logger> log;
  std::unique_ptr<HttpServer> server;
  try {
    if (!options.scenario_path && !options.settings.empty()) {
      throw InputError::at(
          "", std::nullopt, "--set",
          "needs a scenario file to change (e.g. gangway serve examples/serve.yaml "
          "--set ...)");
    }
    scenario = options.scenario_path
                   ? load_scenario_with_settings(*options.scenario_path, options.settings)
                   : default_scenario();
    apply_serve_overrides(options, scenario);
    warn_if_pace_reserve_cannot_pace_one(scenario.node, scenario.policy, err);
    log = std::make_unique<Logger>(parse_log_level(scenario.server.log_level));
    server = std::make_unique<HttpServer>(scenario, scenario.server, *log,
                                          HttpServer::Options{.handle_signals = true});
  } catch (const InputError& error) {
    err << "gangway: error: " << error.what() << "\n";
    return 2;
  } catch (const std::system_error& error) {
    err << "gangway: error: cannot listen on " << scenario.server.host << ":"
        << scenario.server.port << ": " << error.code().message() << "\n";
    return 2;
  } catch (const std::exception& error) {
    err << "gangway: error: " << error.what() << "\n";
    return 2;
  }
  // Engines with a launch template are started here, each until it answers its health check;
  // the supervisor restarts one that dies (the scheduler sees it down and up by its own health
  // polls) and stops them all when the server has stopped.
  std::unique_ptr<EngineSupervisor> supervisor;
  const std::vector<EngineLaunchSpec> launches = engine_launch_specs(
      scenario.server.engines, scenario.node, std::filesystem::temp_directory_path().string());
  if (!launches.empty()) {
    for (const EngineLaunchSpec& launch : launches) {
      log->info("engine_launch", {{"engine", launch.name}, {"log", launch.log_path}});
    }
    EngineSupervisorCallbacks callbacks;
    const Logger* logger = log.get();
    callbacks.on_down = [logger](size_t, const std::string& name, const std::string& reason) {
      logger->warn("engine_process_down", {{"engine", name}, {"reason", reason}});
    };
    callbacks.on_up = [logger](size_t, const std::string& name) {
      logger->info("engine_process_up", {{"engine", name}});
    };
    supervisor = std::make_unique<EngineSupervisor>(launches, EngineSupervisorOptions(),
                                                    std::move(callbacks));
    try {
      supervisor->start();
    } catch (const EngineStartError& error) {
      err << "gangway: error: " << error.what() << "\n";
      return 1;
    }
  }
  if (options.port_file) {
    const std::string temporary = *options.port_file + ".tmp";
    std::ofstream out(temporary);
    out << server->port() << "\n";
    out.close();
    if (!out || std::rename(temporary.c_str(), options.port_file->c_str()) != 0) {
      err << "gangway: error: cannot write --port-file " << *options.port_file << "\n";
      return 2;
    }
  }
  int status = 1;
  try {
    status = server->run();
  } catch (const std::exception& error) {
    log->error("failed", {{"error", error.what()}});
  }
  if (supervisor) supervisor->stop();
  return status;
}

}  // namespace gangway
