// Test support for the config layer's bad-input tests: parse a scenario that must fail and check
// that its one InputError is located ("FILE:LINE: KEY.PATH: ") and says what was expected.
// Included by tests only.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/scenario.h"
#include "core/input_error.h"

namespace gangway {

// The message of the InputError that parsing `yaml` as `file` throws; a test failure and an
// empty string when it parses.
inline std::string scenario_error_of(const std::string& yaml, const std::string& file) {
  try {
    parse_scenario(yaml, file);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError for:\n" << yaml;
  return "";
}

// `where` is "LINE: KEY.PATH"; `what` a fragment of the explanation.
inline void expect_scenario_error(const std::string& yaml, const std::string& file,
                                  const std::string& where, const std::string& what) {
  const std::string message = scenario_error_of(yaml, file);
  EXPECT_THAT(message, ::testing::StartsWith(file + ":" + where + ": ")) << yaml;
  EXPECT_THAT(message, ::testing::HasSubstr(what)) << yaml;
}

// The scenario_*errors_test files' pieces: scenarios named "bad.yaml", built from these parts.
// Two lines: a small model "llama-3-8b".
inline const std::string kSmallModelYaml = R"(models:
  - {name: llama-3-8b, tier: small, shape: llama-3-8b}
)";
// Three lines: one stream of "llama-3-8b".
inline const std::string kChatWorkloadYaml = R"(workload:
  streams:
    - {name: chat, model: llama-3-8b, arrival: {rate_per_s: 10}}
)";

inline std::string bad_scenario_error(const std::string& yaml) {
  return scenario_error_of(yaml, "bad.yaml");
}

inline void expect_bad_scenario(const std::string& yaml, const std::string& where,
                                const std::string& what) {
  expect_scenario_error(yaml, "bad.yaml", where, what);
}

}  // namespace gangway
