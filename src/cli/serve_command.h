// `gangway serve`: the node daemon. Reads a scenario (the node, its models, SLO classes, tenants
// and policy, plus its `server:` section), lets flags override the server settings, and serves
// the OpenAI-compatible API over emulated GPUs until SIGTERM (drain, exit 0). docs/server.md.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace gangway {

struct ServeOptions {
  std::optional<std::string> scenario_path;
  // --set KEY.PATH=VALUE changes to the scenario file (scenario_setting.h).
  std::vector<std::string> settings;
  std::optional<std::string> host;
  std::optional<int> port;
  std::optional<int> agent_port;
  std::optional<int> network_threads;
  std::optional<std::string> scheduler_thread;
  std::optional<std::string> policy;
  std::optional<double> drain_grace_s;
  std::optional<double> read_timeout_s;
  std::optional<int> stream_interval_tokens;
  std::optional<std::string> log_level;
  std::optional<std::string> port_file;
};

CLI::App* add_serve_command(CLI::App& app, ServeOptions& options);

// Serves until drained. Returns 0 after a drain, 2 for bad input (scenario, flags, an address
// that cannot be bound), 1 for a failure while serving. Messages go to `err`.
int run_serve(const ServeOptions& options, std::ostream& err);

}  // namespace gangway
