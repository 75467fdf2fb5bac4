#include "config/trace_config.h"

#include <memory>

#include "config/input_path.h"
#include "config/length_config.h"
#include "workload/trace/trace_row_reader.h"

namespace gangway {
namespace {

TraceMappingRule read_rule(const YamlValue& value, const ScenarioNames& names,
                           std::optional<TraceFormat> format) {
  const YamlMap map = value.map({"name", "model", "class", "tenant", "share", "min_prompt_tokens",
                                 "max_prompt_tokens", "trace_model"});
  TraceMappingRule rule;
  rule.model = names.first_small_model();
  if (const auto v = map.get("name")) rule.name = v->text();
  if (const auto v = map.get("model")) rule.model = names.model(*v);
  if (const auto v = map.get("class")) rule.slo_class = names.slo_class(*v);
  if (const auto v = map.get("tenant")) rule.tenant = names.tenant(*v);
  if (const auto v = map.get("share")) rule.share = v->number_in(0.0, 1.0, true, false);
  if (const auto v = map.get("min_prompt_tokens")) rule.min_prompt_tokens = v->int32_at_least(0);
  if (const auto v = map.get("max_prompt_tokens")) {
    rule.max_prompt_tokens = v->int32_at_least(rule.min_prompt_tokens.value_or(0));
  }
  if (const auto v = map.get("trace_model")) {
    rule.trace_model = v->text();
    if (format && *format != TraceFormat::burstgpt) {
      v->fail("expected only for burstgpt traces (the only format with a model column), not " +
              std::string(to_string(*format)));
    }
  }
  return rule;
}

TraceMaxTokens read_max_tokens(const YamlValue& value) {
  const YamlMap map = value.map({"at_least_output", "fixed"});
  TraceMaxTokens max_tokens;
  const auto at_least = map.get("at_least_output");
  const auto fixed = map.get("fixed");
  if (at_least && fixed) fixed->fail("expected either at_least_output or fixed, not both");
  if (at_least) {
    max_tokens.kind = TraceMaxTokens::Kind::at_least_output;
    max_tokens.tokens = at_least->int32_at_least(0);
  } else if (fixed) {
    max_tokens.kind = TraceMaxTokens::Kind::fixed;
    max_tokens.tokens = fixed->int32_at_least(1);
  } else {
    value.fail("expected {at_least_output: TOKENS} or {fixed: TOKENS}");
  }
  return max_tokens;
}

// validate(TraceSpec) names fields as the struct spells them ("rules[0].share"); the file spells
// them under the section's key ("workload.trace.mapping[0].share").
void validate_trace_spec(const TraceSpec& spec, const YamlValue& value) {
  TraceSpec unplaced = spec;
  unplaced.origin.clear();
  try {
    validate(unplaced);
  } catch (const InputError& e) {
    std::string message = e.what();
    if (message.starts_with("rules[")) message.replace(0, 5, "mapping");
    throw value.document().locate(InputError(value.path() + "." + message));
  }
}

}  // namespace

std::vector<TraceMappingRule> default_trace_mapping(const ScenarioNames& names) {
  TraceMappingRule rule;
  rule.model = names.first_small_model();
  return {rule};
}

std::vector<TraceMappingRule> read_trace_mapping(const YamlValue& value, const ScenarioNames& names,
                                                 std::optional<TraceFormat> format) {
  std::vector<TraceMappingRule> rules;
  for (const YamlValue& item : value.list()) rules.push_back(read_rule(item, names, format));
  if (rules.empty()) value.fail("expected at least one mapping rule");
  return rules;
}

TraceSpec read_trace(const YamlValue& value, const ScenarioNames& names,
                     const std::vector<TraceMappingRule>& default_rules,
                     const std::string& scenario_path) {
  const YamlMap map = value.map({"path", "format", "rate_scale", "start_s", "end_s", "max_tokens",
                                 "spread_equal_timestamps", "mapping"});
  TraceSpec spec;
  spec.origin = value.document().file();
  if (value.line()) {
    spec.origin += ':';
    spec.origin += std::to_string(*value.line());
  }
  const YamlValue path = map.required("path");
  spec.path = resolve_input_path(path, scenario_path);
  if (const auto v = map.get("format")) spec.format = read_trace_format(*v);
  if (const auto v = map.get("rate_scale")) spec.rate_scale = v->positive_number();
  if (const auto v = map.get("start_s")) spec.start_s = v->non_negative_number();
  if (const auto v = map.get("end_s")) {
    const double start = spec.start_s.value_or(0.0);
    spec.end_s = v->number();
    if (!(*spec.end_s > start)) {
      v->fail("expected a number of seconds > start_s (" + format_number(start) + "), got " +
              format_number(*spec.end_s));
    }
  }
  if (const auto v = map.get("max_tokens")) spec.max_tokens = read_max_tokens(*v);
  if (const auto v = map.get("spread_equal_timestamps"))
    spec.spread_equal_timestamps = v->boolean();
  const auto mapping = map.get("mapping");
  spec.rules = mapping ? read_trace_mapping(*mapping, names, spec.format) : default_rules;
  validate_trace_spec(spec, value);
  // The file opens, its header matches the format and its first row reads; later rows are
  // checked as the replay reaches them.
  bool has_rows = false;
  try {
    TraceRow first_row;
    has_rows = open_trace_rows(spec)->next(first_row);
  } catch (const InputError& e) {
    path.fail(e.what());
  }
  if (!has_rows) path.fail("expected a trace with at least one row, '" + spec.path + "' has none");
  return spec;
}

}  // namespace gangway
