#include "sched/router_registry.h"

#include <utility>

#include "core/input_error.h"
#include "sched/routers/router_factories.h"

namespace gangway {

namespace {

using Factory = std::unique_ptr<Router> (*)();

std::unique_ptr<Router> make_late_binding_router() {
  return std::make_unique<LateBindingRouter>();
}

const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> entries = {
      {"predicted-ttft", &make_predicted_ttft_router}, {"late-binding", &make_late_binding_router},
      {"round-robin", &make_round_robin_router},       {"least-loaded", &make_least_loaded_router},
      {"cache-only", &make_cache_only_router},         {"sglang", &make_sglang_router},
  };
  return entries;
}

}  // namespace

const std::vector<std::string>& router_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& entry : registry()) out.push_back(entry.first);
    return out;
  }();
  return names;
}

bool is_router_name(const std::string& name) {
  for (const auto& entry : registry()) {
    if (entry.first == name) return true;
  }
  return false;
}

std::unique_ptr<Router> make_router(const std::string& name) {
  for (const auto& entry : registry()) {
    if (entry.first == name) return entry.second();
  }
  std::string known;
  for (const std::string& n : router_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError::at("", std::nullopt, "scheduler.routing",
                       "unknown routing rule '" + name + "'; expected one of: " + known);
}

}  // namespace gangway
