// The one error type for bad input from outside: a scenario, config or trace file, or a command
// line. Its message is the single line shown to the user and names where the problem is (file,
// line, key) and what was expected there. Drivers catch it and exit with status 2; anything
// else that escapes is a bug in gangway, not in the input.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace gangway {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}

  // "FILE:LINE: KEY: MESSAGE", leaving out the parts that are unknown.
  static InputError at(const std::string& file, std::optional<int> line, const std::string& key,
                       const std::string& message) {
    std::string text;
    text.reserve(file.size() + key.size() + message.size() + 16);
    text.append(file);
    if (line) text.append(":").append(std::to_string(*line));
    if (!key.empty()) {
      if (!text.empty()) text.append(": ");
      text.append(key);
    }
    if (!text.empty()) text.append(": ");
    text.append(message);
    return InputError(text);
  }
};

}  // namespace gangway
