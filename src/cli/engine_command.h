// `gangway engine`: the test engine, a stand-alone process that serves one model with vLLM's HTTP
// API (the part gangway uses) and batches continuously with gangway's cost model instead of a
// GPU. For CI without GPUs and for rehearsing a deployment on a laptop. docs/engines.md.
#pragma once

#include <ostream>
#include <string>

#include "test_engine/test_engine_options.h"

namespace CLI {
class App;
}  // namespace CLI

namespace gangway {

struct EngineCommandOptions {
  TestEngineOptions engine;
  int64_t port = 8000;
  std::string port_file;  // empty: none
};

CLI::App* add_engine_command(CLI::App& app, EngineCommandOptions& options);

// Serves until SIGTERM or SIGINT (exit 0); 2 for bad flags or a port that cannot be bound, with
// one line on `err`.
int run_engine(EngineCommandOptions& options, std::ostream& err);

}  // namespace gangway
