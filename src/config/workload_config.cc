#include "config/workload_config.h"

#include "config/length_config.h"
#include "config/trace_config.h"

namespace gangway {
namespace {

// Streams the workload generator accepts (it keys random streams by a 16-bit index).
constexpr size_t kMaxStreams = 65536;

PrefixSpec read_prefix(const YamlValue& value) {
  const YamlMap map = value.map({"groups", "group_tokens", "zipf_s", "pool"});
  PrefixSpec spec;
  if (const auto v = map.get("groups")) spec.groups = v->int32_at_least(1);
  spec.group_tokens = map.required("group_tokens").int32_at_least(1);
  if (const auto v = map.get("zipf_s")) spec.zipf_s = v->non_negative_number();
  if (const auto v = map.get("pool")) spec.pool = v->text();
  value.document().run_located([&] { validate(spec, "", value.path()); });
  return spec;
}

SessionSpec read_sessions(const YamlValue& value) {
  const YamlMap map = value.map({"new_session_probability", "think_time_s", "max_active_sessions"});
  SessionSpec spec;
  if (const auto v = map.get("new_session_probability")) {
    spec.new_session_probability = v->number_in(0.0, 1.0, true, false);
  }
  if (const auto v = map.get("think_time_s")) spec.think_time_s = v->non_negative_number();
  if (const auto v = map.get("max_active_sessions")) {
    spec.max_active_sessions = v->int32_at_least(0);
  }
  value.document().run_located([&] { validate(spec, "", value.path()); });
  return spec;
}

std::string origin_of(const YamlValue& value) {
  std::string origin = value.document().file();
  if (value.line()) {
    origin += ':';
    origin += std::to_string(*value.line());
  }
  return origin;
}

}  // namespace

ArrivalSpec read_arrival(const YamlValue& value) {
  const YamlMap map = value.map({"process", "rate_per_s", "cv", "on_rate_per_s", "off_rate_per_s",
                                 "on_s", "off_s", "start_rate_per_s", "end_rate_per_s", "ramp_s"});
  ArrivalSpec spec;
  const std::string process =
      map.has("process") ? map.required("process").choice({"poisson", "gamma", "on_off", "ramp"})
                         : "poisson";
  if (process == "poisson") {
    map.restrict_to({"process", "rate_per_s"}, "process: poisson");
    spec.kind = ArrivalSpec::Kind::poisson;
    spec.rate_per_s = map.required("rate_per_s").positive_number();
  } else if (process == "gamma") {
    map.restrict_to({"process", "rate_per_s", "cv"}, "process: gamma");
    spec.kind = ArrivalSpec::Kind::gamma;
    spec.rate_per_s = map.required("rate_per_s").positive_number();
    if (const auto v = map.get("cv")) spec.cv = v->non_negative_number();
  } else if (process == "on_off") {
    map.restrict_to({"process", "on_rate_per_s", "off_rate_per_s", "on_s", "off_s"},
                    "process: on_off");
    spec.kind = ArrivalSpec::Kind::on_off;
    spec.on_rate_per_s = map.required("on_rate_per_s").positive_number();
    if (const auto v = map.get("off_rate_per_s")) spec.off_rate_per_s = v->non_negative_number();
    spec.on_s = map.required("on_s").positive_number();
    spec.off_s = map.required("off_s").positive_number();
  } else {
    map.restrict_to({"process", "start_rate_per_s", "end_rate_per_s", "ramp_s"}, "process: ramp");
    spec.kind = ArrivalSpec::Kind::ramp;
    if (const auto v = map.get("start_rate_per_s")) {
      spec.start_rate_per_s = v->non_negative_number();
    }
    const YamlValue end = map.required("end_rate_per_s");
    spec.end_rate_per_s = end.non_negative_number();
    spec.ramp_s = map.required("ramp_s").positive_number();
    if (!(spec.start_rate_per_s > 0.0 || spec.end_rate_per_s > 0.0)) {
      end.fail("expected start_rate_per_s or end_rate_per_s > 0 (no request would arrive)");
    }
  }
  value.document().run_located([&] { validate(spec, "", value.path()); });
  return spec;
}

StreamSpec read_stream(const YamlValue& value, const ScenarioNames& names,
                       const std::string& scenario_path) {
  const YamlMap map =
      value.map({"name", "model", "class", "tenant", "arrival", "prompt_tokens", "output_tokens",
                 "max_tokens", "max_prompt_tokens", "prefix", "sessions"});
  StreamSpec spec;
  spec.origin = origin_of(value);
  spec.name = map.required("name").text();
  spec.model = names.model(map.required("model"));
  if (const auto v = map.get("class")) spec.slo_class = names.slo_class(*v);
  if (const auto v = map.get("tenant")) spec.tenant = names.tenant(*v);
  spec.arrival = read_arrival(map.required("arrival"));
  if (const auto v = map.get("prompt_tokens")) {
    spec.prompt_tokens = read_length(*v, TraceLengthColumn::prompt, scenario_path);
  }
  if (const auto v = map.get("output_tokens")) {
    spec.output_tokens = read_length(*v, TraceLengthColumn::output, scenario_path);
  }
  if (const auto v = map.get("max_tokens")) spec.max_tokens = v->int32_at_least(1);
  if (const auto v = map.get("max_prompt_tokens")) spec.max_prompt_tokens = v->int32_at_least(1);
  if (const auto v = map.get("prefix")) spec.prefix = read_prefix(*v);
  if (const auto v = map.get("sessions")) spec.sessions = read_sessions(*v);
  return spec;
}

WorkloadSection read_workload(const std::optional<YamlValue>& value, const YamlValue& where,
                              const ScenarioNames& names,
                              const std::vector<TraceMappingRule>& default_rules,
                              const std::string& scenario_path) {
  constexpr const char* kEmpty =
      "expected a workload: streams (a list of synthetic streams) or trace (a file to replay)";
  if (!value) {
    throw InputError::at(where.document().file(), where.line(), "workload", kEmpty);
  }
  const YamlMap map = value->map({"streams", "trace"});
  const auto streams = map.get("streams");
  const auto trace = map.get("trace");
  if (streams && trace) trace->fail("expected either streams or trace, not both");
  WorkloadSection section;
  if (trace) {
    section.trace = read_trace(*trace, names, default_rules, scenario_path);
    return section;
  }
  const std::vector<YamlValue> items = streams ? streams->list() : std::vector<YamlValue>();
  if (items.empty()) (streams ? *streams : *value).fail(kEmpty);
  if (items.size() > kMaxStreams) {
    streams->fail("expected at most " + std::to_string(kMaxStreams) + " streams");
  }
  for (size_t i = 0; i < items.size(); ++i) {
    section.streams.push_back(read_stream(items[i], names, scenario_path));
    for (size_t j = 0; j < i; ++j) {
      if (section.streams[j].name == section.streams[i].name) {
        throw InputError::at(items[i].document().file(), items[i].line(), items[i].path() + ".name",
                             "duplicate stream name " + in_quotes(section.streams[i].name) +
                                 " (also " + items[j].path() + ")");
      }
    }
  }
  return section;
}

}  // namespace gangway
