#include "workload/workload_spec.h"

#include <cmath>
#include <optional>
#include <sstream>

#include "core/input_error.h"
#include "workload/length_sampler.h"

namespace gangway {
namespace {

std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

class SpecChecker {
 public:
  SpecChecker(const std::string& origin, const std::string& key) : origin_(origin), key_(key) {}

  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw InputError::at(origin_, std::nullopt, key_.empty() ? field : key_ + "." + field, message);
  }
  void non_negative(const std::string& field, double value) const {
    if (!(value >= 0.0) || !std::isfinite(value)) {
      fail(field, "expected a finite number >= 0, got " + format_number(value));
    }
  }
  void positive(const std::string& field, double value) const {
    if (!(value > 0.0) || !std::isfinite(value)) {
      fail(field, "expected a finite number > 0, got " + format_number(value));
    }
  }
  void at_least(const std::string& field, double value, double bound) const {
    if (!(value >= bound) || !std::isfinite(value)) {
      fail(field, "expected a number >= " + format_number(bound) + ", got " + format_number(value));
    }
  }

 private:
  const std::string& origin_;
  const std::string& key_;
};

template <typename Kind, size_t N>
Kind parse_kind(std::string_view text, const Kind (&kinds)[N], const std::string& origin,
                const std::string& key) {
  std::string allowed;
  for (const Kind kind : kinds) {
    if (text == to_string(kind)) return kind;
    allowed += (allowed.empty() ? "" : ", ") + std::string(to_string(kind));
  }
  throw InputError::at(origin, std::nullopt, key,
                       "expected one of " + allowed + ", got '" + std::string(text) + "'");
}

}  // namespace

std::string_view to_string(ArrivalSpec::Kind kind) {
  switch (kind) {
    case ArrivalSpec::Kind::poisson:
      return "poisson";
    case ArrivalSpec::Kind::gamma:
      return "gamma";
    case ArrivalSpec::Kind::on_off:
      return "on_off";
    case ArrivalSpec::Kind::ramp:
      return "ramp";
  }
  return "unknown";
}

std::string_view to_string(LengthSpec::Kind kind) {
  switch (kind) {
    case LengthSpec::Kind::constant:
      return "constant";
    case LengthSpec::Kind::geometric:
      return "geometric";
    case LengthSpec::Kind::lognormal:
      return "lognormal";
    case LengthSpec::Kind::empirical:
      return "empirical";
  }
  return "unknown";
}

ArrivalSpec::Kind parse_arrival_kind(std::string_view text, const std::string& origin,
                                     const std::string& key) {
  static constexpr ArrivalSpec::Kind kKinds[] = {
      ArrivalSpec::Kind::poisson, ArrivalSpec::Kind::gamma, ArrivalSpec::Kind::on_off,
      ArrivalSpec::Kind::ramp};
  return parse_kind(text, kKinds, origin, key);
}

LengthSpec::Kind parse_length_kind(std::string_view text, const std::string& origin,
                                   const std::string& key) {
  static constexpr LengthSpec::Kind kKinds[] = {
      LengthSpec::Kind::constant, LengthSpec::Kind::geometric, LengthSpec::Kind::lognormal,
      LengthSpec::Kind::empirical};
  return parse_kind(text, kKinds, origin, key);
}

void validate(const ArrivalSpec& spec, const std::string& origin, const std::string& key) {
  const SpecChecker check(origin, key);
  check.non_negative("rate_scale", spec.rate_scale);
  switch (spec.kind) {
    case ArrivalSpec::Kind::poisson:
      check.non_negative("rate_per_s", spec.rate_per_s);
      break;
    case ArrivalSpec::Kind::gamma:
      check.non_negative("rate_per_s", spec.rate_per_s);
      check.non_negative("cv", spec.cv);
      break;
    case ArrivalSpec::Kind::on_off:
      check.non_negative("on_rate_per_s", spec.on_rate_per_s);
      check.non_negative("off_rate_per_s", spec.off_rate_per_s);
      check.positive("on_s", spec.on_s);
      check.positive("off_s", spec.off_s);
      break;
    case ArrivalSpec::Kind::ramp:
      check.non_negative("start_rate_per_s", spec.start_rate_per_s);
      check.non_negative("end_rate_per_s", spec.end_rate_per_s);
      check.non_negative("ramp_s", spec.ramp_s);
      break;
    default:
      check.fail("kind", "expected one of poisson, gamma, on_off, ramp");
  }
}

void validate(const LengthSpec& spec, const std::string& origin, const std::string& key) {
  const SpecChecker check(origin, key);
  check.at_least("min", spec.min, 1);
  if (spec.max < spec.min) {
    check.fail("max", "expected a number >= min (" + std::to_string(spec.min) + "), got " +
                          std::to_string(spec.max));
  }
  switch (spec.kind) {
    case LengthSpec::Kind::constant:
      check.at_least("value", spec.value, 1);
      break;
    case LengthSpec::Kind::geometric:
      check.at_least("mean", spec.mean, 1);
      break;
    case LengthSpec::Kind::lognormal: {
      check.positive("mean", spec.mean);
      check.positive("p99", spec.p99);
      if (!(spec.p99 > spec.mean)) {
        check.fail("p99",
                   "expected p99 > mean for a lognormal length (p99 = " + format_number(spec.p99) +
                       ", mean = " + format_number(spec.mean) + ")");
      }
      if (!(spec.p99 / spec.mean < lognormal_max_p99_over_mean())) {
        check.fail("p99", "expected p99 / mean below " +
                              format_number(lognormal_max_p99_over_mean()) +
                              " (exp(z^2/2), z = 2.326348) for a lognormal length, got p99 = " +
                              format_number(spec.p99) + ", mean = " + format_number(spec.mean));
      }
      break;
    }
    case LengthSpec::Kind::empirical:
      if (spec.values.empty()) check.fail("values", "expected at least one value");
      for (const int32_t v : spec.values) {
        if (v < 0) check.fail("values", "expected values >= 0, got " + std::to_string(v));
      }
      break;
    default:
      check.fail("kind", "expected one of constant, geometric, lognormal, empirical");
  }
}

void validate(const PrefixSpec& spec, const std::string& origin, const std::string& key) {
  const SpecChecker check(origin, key);
  check.at_least("groups", spec.groups, 1);
  check.at_least("group_tokens", spec.group_tokens, 0);
  check.non_negative("zipf_s", spec.zipf_s);
}

void validate(const SessionSpec& spec, const std::string& origin, const std::string& key) {
  const SpecChecker check(origin, key);
  if (!(spec.new_session_probability > 0.0 && spec.new_session_probability <= 1.0)) {
    check.fail("new_session_probability",
               "expected a probability in (0, 1] (1 / mean turns per session), got " +
                   format_number(spec.new_session_probability));
  }
  check.non_negative("think_time_s", spec.think_time_s);
  check.at_least("max_active_sessions", spec.max_active_sessions, 0);
}

void validate(const StreamSpec& spec) {
  const std::string prefix = spec.name.empty() ? std::string() : spec.name + ".";
  const auto key = [&](const char* field) { return prefix + field; };
  validate(spec.arrival, spec.origin, key("arrival"));
  validate(spec.prompt_tokens, spec.origin, key("prompt_tokens"));
  validate(spec.output_tokens, spec.origin, key("output_tokens"));
  const SpecChecker check(spec.origin, spec.name);
  check.at_least("max_tokens", spec.max_tokens, 1);
  check.at_least("max_prompt_tokens", spec.max_prompt_tokens, 1);
  if (spec.prefix) validate(*spec.prefix, spec.origin, key("prefix"));
  if (spec.sessions) validate(*spec.sessions, spec.origin, key("sessions"));
}

}  // namespace gangway
