#include "server/engine_launch.h"

namespace gangway {

std::vector<EngineLaunchSpec> engine_launch_specs(const EnginesConfig& engines,
                                                  const NodeSpec& node,
                                                  const std::string& log_folder) {
  std::vector<EngineLaunchSpec> specs;
  for (const bool large : {true, false}) {
    for (const ModelEngines& model : engines.models) {
      if (node.model(model.model).is_large() != large || model.launch_template.empty()) continue;
      for (const EngineEndpoint& endpoint : model.endpoints) {
        EngineLaunchSpec spec;
        spec.name = node.model(model.model).name + "@" + endpoint.url;
        spec.command = {"/bin/sh", "-c", "exec " + endpoint.launch_command};
        for (const std::string& variable : model.environment) {
          const size_t equals = variable.find('=');
          spec.environment[variable.substr(0, equals)] = variable.substr(equals + 1);
        }
        spec.health_url = "http://" + endpoint.host + ":" + std::to_string(endpoint.port) +
                          (model.kind == EngineKind::kOpenai ? "/v1/models" : "/health");
        spec.log_path = log_folder + "/gangway-engine-" + std::to_string(endpoint.port) + ".log";
        specs.push_back(std::move(spec));
      }
    }
  }
  return specs;
}

}  // namespace gangway
