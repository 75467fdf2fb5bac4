#include "config/yaml_reader.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>
#include <utility>

namespace gangway {
namespace {

std::optional<int> line_of_mark(const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) return std::nullopt;
  return mark.line + 1;
}

std::string child_path(const std::string& parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return parent + "." + std::string(key);
}

std::string shortened(const std::string& text) {
  constexpr size_t kMaxShown = 80;
  if (text.size() <= kMaxShown) return text;
  return text.substr(0, kMaxShown) + "...";
}

// A key as a message shows it: one line, not too long.
std::string printable(const std::string& key) {
  std::string shown;
  for (const char c : key) shown += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  return shortened(shown);
}

bool is_key_path(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '[' || c == ']' || c == '-' || c == '*';
    if (!ok) return false;
  }
  return true;
}

// A quoted scalar carries the non-specific tag "!"; a plain one "?".
bool is_quoted(const YAML::Node& node) {
  return node.Tag() == "!";
}

std::optional<double> parse_double(std::string_view text) {
  if (text.starts_with('+')) text.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<int64_t> parse_int64(std::string_view text) {
  if (text.starts_with('+')) text.remove_prefix(1);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::vector<std::string> to_strings(std::initializer_list<std::string_view> views) {
  std::vector<std::string> out;
  out.reserve(views.size());
  for (const std::string_view view : views) out.emplace_back(view);
  return out;
}

}  // namespace

std::string in_quotes(const std::string& text) {
  std::string quoted = "'";
  quoted += printable(text);
  quoted += '\'';
  return quoted;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

std::string format_number(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

// ---- YamlDocument ------------------------------------------------------------------------------

YamlDocument::YamlDocument(const std::string& text, std::string file) : file_(std::move(file)) {
  try {
    root_ = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    std::string message = "YAML syntax error: " + e.msg;
    if (!e.mark.is_null()) message += " (column " + std::to_string(e.mark.column + 1) + ")";
    throw InputError::at(file_, line_of_mark(e.mark), "", message);
  }
}

YamlValue YamlDocument::root() {
  const std::optional<int> line = root_.IsDefined() ? line_of_mark(root_.Mark()) : std::nullopt;
  return YamlValue(*this, root_, "", line.value_or(1));
}

std::optional<int> YamlDocument::line_of(const std::string& key_path) const {
  std::string key = key_path;
  while (!key.empty()) {
    const auto found = key_lines_.find(key);
    if (found != key_lines_.end()) return found->second;
    const size_t cut = key.find_last_of(".[");
    if (cut == std::string::npos) break;
    key.resize(cut);
  }
  return std::nullopt;
}

void YamlDocument::apply_settings(const std::vector<ScenarioSetting>& settings) {
  for (const ScenarioSetting& setting : settings) {
    set_paths_.emplace_back(apply_scenario_setting(root_, setting, file_), setting.flag);
  }
}

std::optional<std::string> YamlDocument::set_on_command_line(const std::string& key_path) const {
  // The last setting that reached the key decides its value, and so names it.
  for (auto it = set_paths_.rbegin(); it != set_paths_.rend(); ++it) {
    const auto& [set, flag] = *it;
    if (key_path == set) return flag;
    if (key_path.size() > set.size() && key_path.starts_with(set) &&
        (key_path[set.size()] == '.' || key_path[set.size()] == '[')) {
      return flag;
    }
  }
  return std::nullopt;
}

InputError YamlDocument::error_at(std::optional<int> line, const std::string& key_path,
                                  const std::string& message) const {
  if (const auto flag = set_on_command_line(key_path)) {
    return InputError::at(file_, std::nullopt, *flag + " " + key_path, message);
  }
  return InputError::at(file_, line, key_path, message);
}

InputError YamlDocument::locate(const InputError& error) const {
  const std::string what = error.what();
  const size_t colon = what.find(": ");
  if (colon != std::string::npos && is_key_path(std::string_view(what).substr(0, colon))) {
    const std::string key_path = what.substr(0, colon);
    if (const auto flag = set_on_command_line(key_path)) {
      return InputError::at(file_, std::nullopt, *flag + " " + key_path, what.substr(colon + 2));
    }
    return InputError::at(file_, line_of(key_path), "", what);
  }
  return InputError::at(file_, std::nullopt, "", what);
}

void YamlDocument::note_line(const std::string& key_path, std::optional<int> line) {
  if (line) key_lines_.emplace(key_path, *line);
}

// ---- YamlValue ---------------------------------------------------------------------------------

YamlValue::YamlValue(YamlDocument& document, YAML::Node node, std::string path,
                     std::optional<int> line)
    : document_(&document), node_(std::move(node)), path_(std::move(path)), line_(line) {
  document_->note_line(path_, line_);
}

InputError YamlValue::error(const std::string& message) const {
  return document_->error_at(line_, path_, message);
}

void YamlValue::fail(const std::string& message) const {
  throw error(message);
}

std::string YamlValue::describe() const {
  if (!node_.IsDefined() || node_.IsNull()) return "nothing";
  if (node_.IsSequence()) return "a list";
  if (node_.IsMap()) return "a mapping";
  const std::string shown = in_quotes(node_.Scalar());
  return is_quoted(node_) ? "the quoted text " + shown : shown;
}

const std::string& YamlValue::plain_scalar(const char* what) const {
  if (!node_.IsScalar()) fail(std::string("expected ") + what + ", got " + describe());
  if (is_quoted(node_)) {
    fail(std::string("expected ") + what + ", got " + describe() + " (write it without quotes)");
  }
  return node_.Scalar();
}

std::string YamlValue::text() const {
  if (!node_.IsScalar()) fail("expected a text value, got " + describe());
  if (node_.Scalar().empty()) fail("expected a non-empty text value");
  for (const char c : node_.Scalar()) {
    if (static_cast<unsigned char>(c) < 0x20) fail("expected text on one line, got " + describe());
  }
  return node_.Scalar();
}

double YamlValue::number() const {
  const std::string& text = plain_scalar("a number");
  const std::optional<double> value = parse_double(text);
  if (!value) fail("expected a number, got " + describe());
  if (!std::isfinite(*value)) fail("expected a finite number, got " + describe());
  return *value;
}

int64_t YamlValue::integer() const {
  const std::string& text = plain_scalar("a whole number");
  if (const std::optional<int64_t> value = parse_int64(text)) return *value;
  if (const std::optional<double> value = parse_double(text); value && std::isfinite(*value)) {
    if (*value == std::floor(*value)) fail("expected a whole number in range, got " + describe());
    fail("expected a whole number, got " + describe());
  }
  fail("expected a whole number, got " + describe());
}

bool YamlValue::boolean() const {
  const std::string& text = plain_scalar("true or false");
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  fail("expected true or false, got " + describe());
}

std::vector<YamlValue> YamlValue::list() const {
  std::vector<YamlValue> items;
  if (node_.IsNull()) return items;  // `key:` with nothing after it: an empty list
  if (!node_.IsSequence()) fail("expected a list, got " + describe());
  items.reserve(node_.size());
  for (size_t i = 0; i < node_.size(); ++i) {
    const YAML::Node item = node_[i];
    const std::optional<int> item_line = line_of_mark(item.Mark());
    items.emplace_back(*document_, item, path_ + "[" + std::to_string(i) + "]",
                       item_line ? item_line : line_);
  }
  return items;
}

YamlMap YamlValue::map(std::initializer_list<std::string_view> allowed_keys) const {
  return map(to_strings(allowed_keys));
}

YamlMap YamlValue::map(const std::vector<std::string>& allowed_keys) const {
  std::vector<std::pair<std::string, YamlValue>> entries;
  if (node_.IsNull()) return YamlMap(*this, std::move(entries));  // `key:` alone: empty mapping
  if (!node_.IsMap()) fail("expected a mapping (key: value entries), got " + describe());
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const YAML::Node key_node = it->first;
    const std::optional<int> key_line = line_of_mark(key_node.Mark());
    if (!key_node.IsScalar() || key_node.Scalar().empty()) {
      const std::string got =
          key_node.IsScalar() || key_node.IsNull()
              ? "an empty key"
              : "a key that is " + YamlValue(*document_, key_node, path_, key_line).describe();
      throw document_->error_at(key_line, path_, "expected text keys, got " + got);
    }
    const std::string key = key_node.Scalar();
    const std::string path = child_path(path_, printable(key));
    bool allowed = false;
    for (const std::string& name : allowed_keys) allowed = allowed || name == key;
    if (!allowed) {
      throw document_->error_at(key_line, path,
                                "unknown key; allowed keys here: " + join_names(allowed_keys));
    }
    for (const auto& [seen_key, seen_value] : entries) {
      if (seen_key == key) {
        const std::string first_line =
            seen_value.line()
                ? " (first written on line " + std::to_string(*seen_value.line()) + ")"
                : "";
        throw document_->error_at(key_line, path, "duplicate key" + first_line);
      }
    }
    entries.emplace_back(key, YamlValue(*document_, it->second, path, key_line));
  }
  return YamlMap(*this, std::move(entries));
}

double YamlValue::positive_number() const {
  const double value = number();
  if (!(value > 0.0)) fail("expected a number > 0, got " + format_number(value));
  return value;
}

double YamlValue::non_negative_number() const {
  const double value = number();
  if (!(value >= 0.0)) fail("expected a number >= 0, got " + format_number(value));
  return value;
}

double YamlValue::number_in(double low, double high, bool low_open, bool high_open) const {
  const double value = number();
  const bool above = low_open ? value > low : value >= low;
  const bool below = high_open ? value < high : value <= high;
  if (!above || !below) {
    fail(std::string("expected a number in ") + (low_open ? "(" : "[") + format_number(low) + ", " +
         format_number(high) + (high_open ? ")" : "]") + ", got " + format_number(value));
  }
  return value;
}

int64_t YamlValue::integer_in(int64_t low, int64_t high) const {
  const int64_t value = integer();
  if (value < low || value > high) {
    if (high == std::numeric_limits<int64_t>::max() ||
        high == std::numeric_limits<int32_t>::max()) {
      fail("expected a whole number >= " + std::to_string(low) + ", got " + std::to_string(value));
    }
    fail("expected a whole number in [" + std::to_string(low) + ", " + std::to_string(high) +
         "], got " + std::to_string(value));
  }
  return value;
}

int32_t YamlValue::int32_at_least(int32_t low) const {
  return static_cast<int32_t>(integer_in(low, std::numeric_limits<int32_t>::max()));
}

std::string YamlValue::choice(std::initializer_list<std::string_view> choices) const {
  const std::string value = text();
  for (const std::string_view allowed : choices) {
    if (value == allowed) return value;
  }
  fail("expected one of " + join_names(to_strings(choices)) + ", got " + in_quotes(value));
}

// ---- YamlMap -----------------------------------------------------------------------------------

YamlMap::YamlMap(YamlValue self, std::vector<std::pair<std::string, YamlValue>> entries)
    : self_(std::move(self)), entries_(std::move(entries)) {}

bool YamlMap::has(std::string_view key) const {
  return get(key).has_value();
}

std::optional<YamlValue> YamlMap::get(std::string_view key) const {
  for (const auto& [name, value] : entries_) {
    if (name == key) return value;
  }
  return std::nullopt;
}

YamlValue YamlMap::required(std::string_view key) const {
  if (std::optional<YamlValue> value = get(key)) return *value;
  throw InputError::at(self_.document().file(), self_.line(), child_path(self_.path(), key),
                       "expected a value: this key is required");
}

void YamlMap::restrict_to(const std::vector<std::string>& allowed_keys,
                          const std::string& why) const {
  for (const auto& [name, value] : entries_) {
    bool allowed = false;
    for (const std::string& allowed_name : allowed_keys) allowed = allowed || allowed_name == name;
    if (!allowed) {
      value.fail("not used by " + why + "; allowed keys there: " + join_names(allowed_keys));
    }
  }
}

}  // namespace gangway
