#include "workload/trace/trace_spec.h"

#include <cmath>
#include <sstream>

#include "core/input_error.h"

namespace gangway {

std::string_view to_string(TraceFormat format) {
  switch (format) {
    case TraceFormat::azure:
      return "azure";
    case TraceFormat::mooncake:
      return "mooncake";
    case TraceFormat::burstgpt:
      return "burstgpt";
  }
  return "unknown";
}

TraceFormat parse_trace_format(std::string_view text, const std::string& origin,
                               const std::string& key) {
  for (const TraceFormat format :
       {TraceFormat::azure, TraceFormat::mooncake, TraceFormat::burstgpt}) {
    if (text == to_string(format)) return format;
  }
  throw InputError::at(
      origin, std::nullopt, key,
      "expected one of azure, mooncake, burstgpt, got '" + std::string(text) + "'");
}

namespace {
std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}
}  // namespace

void validate(const TraceSpec& spec) {
  const auto fail = [&](const std::string& key, const std::string& message) {
    throw InputError::at(spec.origin, std::nullopt, key, message);
  };
  if (spec.path.empty()) fail("path", "expected the path of a trace file");
  if (!(spec.rate_scale > 0.0) || !std::isfinite(spec.rate_scale)) {
    fail("rate_scale", "expected a finite number > 0, got " + format_number(spec.rate_scale));
  }
  if (spec.start_s && (!(*spec.start_s >= 0.0) || !std::isfinite(*spec.start_s))) {
    fail("start_s",
         "expected a finite number of seconds >= 0, got " + format_number(*spec.start_s));
  }
  if (spec.end_s) {
    const double start = spec.start_s.value_or(0.0);
    if (!(*spec.end_s > start) || std::isnan(*spec.end_s)) {
      fail("end_s", "expected a number of seconds > start_s (" + format_number(start) + "), got " +
                        format_number(*spec.end_s));
    }
  }
  if (spec.max_tokens.tokens < 0 ||
      (spec.max_tokens.kind == TraceMaxTokens::Kind::fixed && spec.max_tokens.tokens < 1)) {
    fail("max_tokens",
         "expected a number of tokens >= 1, got " + std::to_string(spec.max_tokens.tokens));
  }
  if (spec.trace_block_tokens < 1) {
    fail("trace_block_tokens",
         "expected a number of tokens >= 1, got " + std::to_string(spec.trace_block_tokens));
  }
  for (size_t i = 0; i < spec.rules.size(); ++i) {
    const TraceMappingRule& rule = spec.rules[i];
    const std::string key = "rules[" + std::to_string(i) + "]";
    if (!(rule.share > 0.0 && rule.share <= 1.0)) {
      fail(key + ".share",
           "expected a fraction of rows in (0, 1], got " + format_number(rule.share));
    }
    if (rule.min_prompt_tokens && rule.max_prompt_tokens &&
        *rule.max_prompt_tokens < *rule.min_prompt_tokens) {
      fail(key + ".max_prompt_tokens", "expected a number >= min_prompt_tokens (" +
                                           std::to_string(*rule.min_prompt_tokens) + ")");
    }
    if (rule.trace_model && spec.format != TraceFormat::burstgpt) {
      fail(key + ".trace_model", "expected only for burstgpt traces (they have a Model column)");
    }
  }
}

}  // namespace gangway
