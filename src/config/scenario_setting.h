// `--set KEY.PATH=VALUE`: one change to a scenario's YAML tree, made before the loader reads it,
// so that a value given on the command line is checked exactly like one written in the file (the
// same strictness, the same messages, located as "FILE: --set KEY.PATH: expected ...").
//
// KEY.PATH uses the key paths of the loader's messages: mapping keys joined by dots, list items
// by index or, for lists of named items, by name: `policy.lease_max_ms`,
// `workload.streams[0].arrival.rate_per_s`, `workload.streams[sm-chat].arrival.rate_per_s`,
// `slo_classes[interactive].ttft_ms`. VALUE is YAML (`100`, `gangway`, `[0, 1]`,
// `{dist: geometric, mean: 64}`). A key that is missing is added (the loader then says whether
// it is allowed there); a list index one past the end appends an item. Where the file uses a
// short form (`policy: fcfs`, `hardware: h200-sxm-141gb`, `shape: llama-3-8b`,
// `prompt_tokens: 128`), setting a key inside it first expands it to its mapping form
// (`{name: fcfs}`, `{preset: ...}`, `{value: 128}`).
#pragma once

#include <string>
#include <vector>

namespace YAML {
class Node;
}  // namespace YAML

namespace gangway {

struct ScenarioSetting {
  std::string key_path;
  std::string value;           // YAML text
  std::string flag = "--set";  // the command-line flag it came from, which errors name
};

// Parses "KEY.PATH=VALUE" (the first '=' splits) given with `flag`; throws InputError naming
// `flag` when there is no '=' or no key.
ScenarioSetting parse_scenario_setting(const std::string& text, const std::string& flag = "--set");

// Applies `setting` to `root` (a scenario's whole tree) and returns the key path it changed, with
// list items written by index ("workload.streams[2].model"). Throws InputError
// "FILE: --set KEY.PATH: ..." (or the setting's flag) when the path cannot be followed (a list
// indexed past its end, a name no item has, a key inside a plain value) or VALUE is not YAML.
std::string apply_scenario_setting(YAML::Node& root, const ScenarioSetting& setting,
                                   const std::string& file);

}  // namespace gangway
