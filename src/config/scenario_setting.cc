#include "config/scenario_setting.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <optional>

#include "config/yaml_reader.h"
#include "core/input_error.h"

namespace gangway {
namespace {

// One step of a key path: a mapping key, or a list item by index or by name.
struct Step {
  bool is_key = true;
  std::string text;
};

// Keys whose value may be written in a short form, and the key the short form stands for.
std::optional<std::string> short_form_key(const std::string& key) {
  if (key == "policy") return "name";
  if (key == "hardware" || key == "shape") return "preset";
  if (key == "prompt_tokens" || key == "output_tokens") return "value";
  return std::nullopt;
}

std::optional<size_t> parse_index(const std::string& text) {
  size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

class SettingError {
 public:
  SettingError(const std::string& file, const ScenarioSetting& setting)
      : file_(file), key_(setting.flag + " " + setting.key_path) {}
  [[noreturn]] void fail(const std::string& message) const {
    throw InputError::at(file_, std::nullopt, key_, message);
  }

 private:
  const std::string& file_;
  std::string key_;
};

std::vector<Step> parse_path(const std::string& path, const SettingError& error) {
  std::vector<Step> steps;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string::npos || close == i + 1) {
        error.fail("expected [INDEX] or [NAME] in the key path");
      }
      steps.push_back({false, path.substr(i + 1, close - i - 1)});
      i = close + 1;
      if (i < path.size() && path[i] == '.') ++i;
      continue;
    }
    const size_t end = path.find_first_of(".[", i);
    const std::string key = path.substr(i, end == std::string::npos ? end : end - i);
    if (key.empty()) error.fail("expected a key path like policy.lease_max_ms");
    steps.push_back({true, key});
    if (end == std::string::npos) break;
    i = path[end] == '.' ? end + 1 : end;
    if (path[end] == '.' && i == path.size()) error.fail("expected a key after the last '.'");
  }
  if (steps.empty() || !steps.front().is_key) {
    error.fail("expected a key path like policy.lease_max_ms");
  }
  return steps;
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return in_quotes(node.Scalar());
}

}  // namespace

ScenarioSetting parse_scenario_setting(const std::string& text, const std::string& flag) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw InputError::at(
        "", std::nullopt, flag,
        "expected KEY.PATH=VALUE (e.g. policy.lease_max_ms=100), got " + in_quotes(text));
  }
  return {text.substr(0, equals), text.substr(equals + 1), flag};
}

std::string apply_scenario_setting(YAML::Node& root, const ScenarioSetting& setting,
                                   const std::string& file) {
  const SettingError error(file, setting);
  const std::vector<Step> steps = parse_path(setting.key_path, error);
  YAML::Node value;
  try {
    value = YAML::Load(setting.value);
  } catch (const YAML::Exception& e) {
    error.fail("expected a YAML value, got " + in_quotes(setting.value) + " (" + e.msg + ")");
  }
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) error.fail("the scenario is not a mapping");

  YAML::Node current = root;  // a handle: reset() moves it, assignment would write through it
  std::string walked;         // the path so far, list items by index
  std::string last_key;
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    const bool last = s + 1 == steps.size();
    if (step.is_key) {
      if (current.IsNull()) current = YAML::Node(YAML::NodeType::Map);
      if (current.IsScalar()) {
        const std::optional<std::string> expanded = short_form_key(last_key);
        if (!expanded) {
          error.fail((walked.empty() ? "the scenario" : walked) + " is " + describe(current) +
                     ", not a mapping with the key '" + step.text + "'");
        }
        YAML::Node mapping(YAML::NodeType::Map);
        mapping[*expanded] = YAML::Clone(current);
        current = mapping;  // writes through: the parent's entry becomes the mapping
      }
      if (current.IsSequence()) {
        error.fail(walked + " is a list: select an item with " + walked + "[INDEX] or " + walked +
                   "[NAME]");
      }
      walked += (walked.empty() ? "" : ".") + step.text;
      last_key = step.text;
      if (last) {
        current[step.text] = value;
      } else {
        if (!current[step.text]) current[step.text] = YAML::Node(YAML::NodeType::Null);
        YAML::Node child = current[step.text];
        current.reset(child);
      }
      continue;
    }
    if (!current.IsSequence()) {
      error.fail(walked + " is " + describe(current) + ", not a list to select [" + step.text +
                 "] from");
    }
    std::optional<size_t> index = parse_index(step.text);
    if (!index) {
      std::vector<std::string> names;
      for (size_t i = 0; i < current.size(); ++i) {
        const YAML::Node name = current[i].IsMap() ? current[i]["name"] : YAML::Node();
        if (name && name.IsScalar()) {
          names.push_back(name.Scalar());
          if (name.Scalar() == step.text && !index) index = i;
        }
      }
      if (!index) {
        error.fail(walked + " has no item named " + in_quotes(step.text) +
                   (names.empty() ? "" : "; its items are named " + join_names(names)));
      }
    } else if (*index > current.size()) {
      error.fail(walked + " has " + std::to_string(current.size()) +
                 (current.size() == 1 ? " item" : " items") + ": expected an index from 0 to " +
                 std::to_string(current.size()) + " (the last appends one)");
    }
    walked += '[';
    walked += std::to_string(*index);
    walked += ']';
    if (*index == current.size()) current.push_back(YAML::Node(YAML::NodeType::Null));
    if (last) {
      current[*index] = value;
    } else {
      YAML::Node child = current[*index];
      current.reset(child);
    }
  }
  return walked;
}

}  // namespace gangway
