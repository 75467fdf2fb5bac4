#include "cli/workload_overrides.h"

#include <CLI/CLI.hpp>
#include <charconv>

#include "core/input_error.h"
#include "workload/trace/trace_spec.h"

namespace gangway {

void apply_workload_overrides(const WorkloadOverrides& overrides, Scenario& scenario) {
  if (overrides.seed) scenario.seed = *overrides.seed;
  if (overrides.duration_s) {
    if (!(*overrides.duration_s > 0)) {
      throw InputError::at("", std::nullopt, "--duration", "expected seconds > 0");
    }
    scenario.duration = seconds_to_duration(*overrides.duration_s);
    if (scenario.warmup >= scenario.duration) {
      throw InputError::at("", std::nullopt, "--duration",
                           "expected more than the scenario's warmup_s (" +
                               std::to_string(to_seconds(scenario.warmup)) + " s)");
    }
  }
  if (overrides.trace_format && !overrides.trace_path) {
    throw InputError::at("", std::nullopt, "--trace-format", "needs --trace FILE");
  }
  if (overrides.trace_path) {
    TraceSpec trace;
    trace.path = *overrides.trace_path;
    trace.format =
        overrides.trace_format
            ? parse_trace_format(*overrides.trace_format, "", "--trace-format")
            : (trace.path.ends_with(".jsonl") ? TraceFormat::mooncake : TraceFormat::azure);
    trace.rules = scenario.trace_mapping;
    trace.origin = "--trace";
    scenario.streams.clear();
    scenario.trace = trace;
  }
  if (overrides.rate_scale) {
    if (!(*overrides.rate_scale > 0)) {
      throw InputError::at("", std::nullopt, "--rate-scale", "expected a factor > 0");
    }
    for (StreamSpec& stream : scenario.streams) stream.arrival.rate_scale *= *overrides.rate_scale;
    if (scenario.trace) scenario.trace->rate_scale *= *overrides.rate_scale;
  }
  if (scenario.trace) validate(*scenario.trace);
}

}  // namespace gangway

namespace gangway {

std::vector<ScenarioSetting> parse_settings(const std::vector<std::string>& settings) {
  std::vector<ScenarioSetting> parsed;
  for (const std::string& text : settings) parsed.push_back(parse_scenario_setting(text));
  return parsed;
}

Scenario load_scenario_with_settings(const std::string& path,
                                     const std::vector<std::string>& settings) {
  return load_scenario(path, parse_settings(settings));
}

void add_set_option(CLI::App& command, std::vector<std::string>& settings) {
  command
      .add_option("--set", settings,
                  "Change any scenario key, checked like the file: KEY.PATH=VALUE, e.g. "
                  "policy.lease_max_ms=100 or workload.streams[sm-chat].arrival.rate_per_s=500 "
                  "(repeatable; docs/scenario.md)")
      ->type_name("KEY.PATH=VALUE");
}

std::vector<uint64_t> parse_seeds(const std::string& text, uint64_t first) {
  const auto number = [&](std::string_view part) {
    uint64_t value = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || error != std::errc() || end != part.data() + part.size()) {
      throw InputError::at("", std::nullopt, "--seeds",
                           "expected N (that many seeds from --seed) or A..B, got '" + text + "'");
    }
    return value;
  };
  constexpr uint64_t kMostSeeds = 1000;
  std::vector<uint64_t> seeds;
  const size_t dots = text.find("..");
  if (dots == std::string::npos) {
    const uint64_t count = number(text);
    if (count < 1 || count > kMostSeeds) {
      throw InputError::at("", std::nullopt, "--seeds", "expected 1 to 1000 seeds");
    }
    for (uint64_t i = 0; i < count; ++i) seeds.push_back(first + i);
    return seeds;
  }
  const uint64_t low = number(std::string_view(text).substr(0, dots));
  const uint64_t high = number(std::string_view(text).substr(dots + 2));
  if (high < low || high - low >= kMostSeeds) {
    throw InputError::at("", std::nullopt, "--seeds",
                         "expected A..B with A <= B and at most 1000 seeds, got '" + text + "'");
  }
  for (uint64_t seed = low; seed <= high; ++seed) seeds.push_back(seed);
  return seeds;
}

}  // namespace gangway
