#include "config/input_path.h"

#include <filesystem>
#include <system_error>

namespace gangway {

std::string resolve_input_path(const YamlValue& value, const std::string& scenario_path) {
  namespace fs = std::filesystem;
  const fs::path written(value.text());
  std::error_code error;
  if (written.is_absolute()) {
    if (fs::is_regular_file(written, error)) return written.string();
    value.fail("cannot find the file '" + written.string() + "'");
  }
  const fs::path folder = fs::path(scenario_path).parent_path();
  const fs::path beside = (folder / written).lexically_normal();
  if (fs::is_regular_file(beside, error)) return beside.string();
  if (fs::is_regular_file(written, error)) return written.string();
  value.fail("cannot find the file '" + written.string() + "' (looked in '" +
             (folder.empty() ? std::string(".") : folder.string()) +
             "', the scenario's folder, and in the current directory)");
}

}  // namespace gangway
