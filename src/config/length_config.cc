#include "config/length_config.h"

#include <memory>
#include <vector>

#include "config/input_path.h"
#include "workload/trace/trace_row_reader.h"

namespace gangway {
namespace {

std::vector<int32_t> read_trace_column(const YamlValue& value, TraceLengthColumn default_column,
                                       const std::string& scenario_path) {
  const YamlMap map = value.map({"path", "format", "column"});
  TraceSpec trace;
  trace.path = resolve_input_path(map.required("path"), scenario_path);
  if (const auto format = map.get("format")) trace.format = read_trace_format(*format);
  TraceLengthColumn column = default_column;
  if (const auto v = map.get("column")) {
    column = v->choice({"prompt", "output"}) == "prompt" ? TraceLengthColumn::prompt
                                                         : TraceLengthColumn::output;
  }
  std::vector<int32_t> values;
  try {
    const std::unique_ptr<TraceRowReader> rows = open_trace_rows(trace);
    TraceRow row;
    while (rows->next(row)) {
      values.push_back(column == TraceLengthColumn::prompt ? row.prompt_tokens : row.output_tokens);
    }
  } catch (const InputError& e) {
    value.fail(e.what());  // the reader's message names the trace file and its line
  }
  if (values.empty())
    value.fail("expected a trace with at least one row, '" + trace.path + "' has none");
  return values;
}

std::vector<int32_t> read_values(const YamlValue& value) {
  std::vector<int32_t> values;
  for (const YamlValue& item : value.list()) values.push_back(item.int32_at_least(0));
  if (values.empty()) value.fail("expected at least one value");
  return values;
}

}  // namespace

TraceFormat read_trace_format(const YamlValue& value) {
  const std::string text = value.text();
  TraceFormat format = TraceFormat::azure;
  value.document().run_located([&] { format = parse_trace_format(text, "", value.path()); });
  return format;
}

LengthSpec read_length(const YamlValue& value, TraceLengthColumn default_column,
                       const std::string& scenario_path) {
  LengthSpec spec;
  if (value.is_scalar()) {
    spec.kind = LengthSpec::Kind::constant;
    spec.value = value.int32_at_least(1);
    return spec;
  }
  const YamlMap map =
      value.map({"dist", "value", "mean", "p99", "values", "from_trace", "min", "max"});
  const std::string dist =
      map.has("dist")
          ? map.required("dist").choice({"constant", "geometric", "lognormal", "empirical"})
          : "constant";
  if (dist == "constant") {
    map.restrict_to({"dist", "value", "min", "max"}, "dist: constant");
    spec.kind = LengthSpec::Kind::constant;
    spec.value = map.required("value").int32_at_least(1);
  } else if (dist == "geometric") {
    map.restrict_to({"dist", "mean", "min", "max"}, "dist: geometric");
    spec.kind = LengthSpec::Kind::geometric;
    spec.mean = map.required("mean").number_in(1.0, 1e9, false, false);
  } else if (dist == "lognormal") {
    map.restrict_to({"dist", "mean", "p99", "min", "max"}, "dist: lognormal");
    spec.kind = LengthSpec::Kind::lognormal;
    spec.mean = map.required("mean").positive_number();
    spec.p99 = map.required("p99").positive_number();
  } else {
    map.restrict_to({"dist", "values", "from_trace", "min", "max"}, "dist: empirical");
    spec.kind = LengthSpec::Kind::empirical;
    const auto values = map.get("values");
    const auto from_trace = map.get("from_trace");
    if (values && from_trace) from_trace->fail("expected either values or from_trace, not both");
    if (values) {
      spec.values = read_values(*values);
    } else if (from_trace) {
      spec.values = read_trace_column(*from_trace, default_column, scenario_path);
    } else {
      map.self().fail("expected values: [...] or from_trace: {path, format, column}");
    }
  }
  if (const auto v = map.get("min")) spec.min = v->int32_at_least(1);
  if (const auto v = map.get("max")) spec.max = v->int32_at_least(spec.min);
  value.document().run_located([&] { validate(spec, "", value.path()); });
  return spec;
}

}  // namespace gangway
