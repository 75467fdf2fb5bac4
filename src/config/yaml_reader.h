// Strict, typed reading of a YAML document for the config layer. Every value knows its key path
// ("workload.streams[0].arrival.rate_per_s") and the line it was written on, so that each error
// reads "FILE:LINE: KEY.PATH: expected ..."; a mapping lists the keys it allows, so an unknown
// (misspelled) key is an error instead of a silently ignored setting. The section parsers in this
// folder only ever see YAML through these classes.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/scenario_setting.h"
#include "core/input_error.h"

namespace gangway {

class YamlValue;

// One parsed file and where each of its keys was written.
class YamlDocument {
 public:
  // Parses `text`; a YAML syntax error is an InputError "FILE:LINE: YAML syntax error ...".
  YamlDocument(const std::string& text, std::string file);
  YamlDocument(const YamlDocument&) = delete;
  YamlDocument& operator=(const YamlDocument&) = delete;

  YamlValue root();
  const std::string& file() const { return file_; }

  // Applies command-line changes to the tree before anything is read (scenario_setting.h). An
  // error at or below a key path they set is then located "FILE: --set KEY.PATH: ..." instead of
  // by line: the value is not in the file.
  void apply_settings(const std::vector<ScenarioSetting>& settings);
  // The error "FILE:LINE: KEY.PATH: message", or "FILE: --set KEY.PATH: message" for a key path
  // a setting wrote.
  InputError error_at(std::optional<int> line, const std::string& key_path,
                      const std::string& message) const;

  // 1-based line where `key_path` was written, else that of the nearest enclosing key that was
  // ("a.b[2].c" falls back to "a.b[2]", "a.b", "a"); nullopt if none was read.
  std::optional<int> line_of(const std::string& key_path) const;
  // `error` must come from a check that knows the key path but not the file ("KEY: message");
  // the result reads "FILE:LINE: KEY: message", the line found by line_of(KEY).
  InputError locate(const InputError& error) const;
  // Runs `check` and turns any InputError it throws into a located one (see locate()).
  template <typename Check>
  void run_located(Check&& check) const {
    try {
      check();
    } catch (const InputError& error) {
      throw locate(error);
    }
  }

 private:
  friend class YamlValue;
  void note_line(const std::string& key_path, std::optional<int> line);

  // The flag that set `key_path` or a key above it ("--set", "--vary"), if one did.
  std::optional<std::string> set_on_command_line(const std::string& key_path) const;

  std::string file_;
  YAML::Node root_;
  std::map<std::string, int> key_lines_;
  // Key paths written by apply_settings, and the flags they came from.
  std::vector<std::pair<std::string, std::string>> set_paths_;
};

class YamlMap;

// A value at a key path. Cheap to copy (YAML::Node is a handle).
class YamlValue {
 public:
  YamlValue(YamlDocument& document, YAML::Node node, std::string path, std::optional<int> line);

  const std::string& path() const { return path_; }
  // The line of the key this value belongs to (or of the value itself for list items).
  std::optional<int> line() const { return line_; }
  YamlDocument& document() const { return *document_; }

  bool is_null() const { return node_.IsNull(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_list() const { return node_.IsSequence(); }
  bool is_map() const { return node_.IsMap(); }

  // InputError "FILE:LINE: PATH: message": fail() throws it, error() returns it.
  [[noreturn]] void fail(const std::string& message) const;
  InputError error(const std::string& message) const;

  // Typed reads; each fails with "expected ..." naming what it found.
  std::string text() const;  // a plain or quoted scalar on one line, not empty
  double number() const;     // a finite plain number
  int64_t integer() const;   // a whole plain number
  bool boolean() const;      // true or false
  // Items have paths "PATH[i]". A key with no value (`key:`) reads as an empty list.
  std::vector<YamlValue> list() const;
  // Fails at the first key not in `allowed_keys` (listing them) and at a key written twice. A key
  // with no value (`key:`) reads as an empty mapping.
  YamlMap map(std::initializer_list<std::string_view> allowed_keys) const;
  YamlMap map(const std::vector<std::string>& allowed_keys) const;

  // Range-checked reads.
  double positive_number() const;      // > 0
  double non_negative_number() const;  // >= 0
  // In [low, high] or, with open bounds, (low, high) / [low, high) / (low, high].
  double number_in(double low, double high, bool low_open, bool high_open) const;
  int64_t integer_in(int64_t low, int64_t high) const;
  int32_t int32_at_least(int32_t low) const;
  // One of `choices`, as written.
  std::string choice(std::initializer_list<std::string_view> choices) const;

  // A short description of what is there ("'abc'", "the quoted text 'abc'", "a list",
  // "nothing"), for messages.
  std::string describe() const;

 private:
  // The scalar as written; fails with "expected <what>" unless this is a plain scalar.
  const std::string& plain_scalar(const char* what) const;

  YamlDocument* document_;
  YAML::Node node_;
  std::string path_;
  std::optional<int> line_;
};

// A mapping whose keys have been checked against an allowed list.
class YamlMap {
 public:
  YamlMap(YamlValue self, std::vector<std::pair<std::string, YamlValue>> entries);

  const YamlValue& self() const { return self_; }
  bool has(std::string_view key) const;
  std::optional<YamlValue> get(std::string_view key) const;
  // Fails at the mapping ("expected the key 'KEY' (required)") when it is missing.
  YamlValue required(std::string_view key) const;
  // Fails at the first key present that is not in `allowed_keys`, explaining with `why` ("not
  // used by process: poisson").
  void restrict_to(const std::vector<std::string>& allowed_keys, const std::string& why) const;
  const std::vector<std::pair<std::string, YamlValue>>& entries() const { return entries_; }

 private:
  YamlValue self_;
  std::vector<std::pair<std::string, YamlValue>> entries_;  // in file order
};

// 'text' on one line, cut short when long: for messages that echo what the file says.
std::string in_quotes(const std::string& text);
// "a, b, c": for messages that list allowed values or known names.
std::string join_names(const std::vector<std::string>& names);
// Shortest text that reads back as the same double ("0.5", "1e+06").
std::string format_number(double value);

}  // namespace gangway
