// How to launch one engine process (vLLM, SGLang, `gangway engine`, any OpenAI server): plain
// data that the caller fills in, with every placeholder of its command already substituted.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gangway {

struct EngineLaunchSpec {
  // Names the engine in messages and callbacks.
  std::string name;
  // argv: the program (looked up on PATH when it has no slash) and its arguments.
  std::vector<std::string> command;
  // Variables set in the engine's environment on top of the supervisor's own.
  std::map<std::string, std::string> environment;
  // GET here answers 200 once the engine serves: "http://127.0.0.1:8100/health".
  std::string health_url;
  // The engine's stdout and stderr are appended to this file.
  std::string log_path;
};

}  // namespace gangway
