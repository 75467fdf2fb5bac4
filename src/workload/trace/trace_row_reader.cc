#include "workload/trace/trace_row_reader.h"

#include <cerrno>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>
#include <utility>

#include "core/input_error.h"
#include "workload/trace/trace_text.h"

namespace gangway {

TraceRowReader::TraceRowReader(std::string path) : path_(std::move(path)) {
  in_.open(path_, std::ios::binary);
  if (!in_) {
    throw InputError::at(path_, std::nullopt, "",
                         "cannot open the trace file: " + std::generic_category().message(errno));
  }
}

bool TraceRowReader::read_line(std::string& line) {
  while (std::getline(in_, line)) {
    ++line_number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_number_ == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);
    if (!trim(line).empty()) return true;
  }
  return false;
}

int64_t TraceRowReader::relative_time(int64_t absolute_ns, const std::string& key) {
  if (!have_first_time_) {
    have_first_time_ = true;
    first_time_ns_ = absolute_ns;
    last_time_ns_ = absolute_ns;
  }
  if (absolute_ns < last_time_ns_) {
    fail(key, "expected a time at or after the previous row's (rows must be in time order)");
  }
  last_time_ns_ = absolute_ns;
  return absolute_ns - first_time_ns_;
}

void TraceRowReader::fail(const std::string& key, const std::string& message) const {
  throw InputError::at(path_, line_number_, key, message);
}

namespace {

std::string shown(std::string_view text) {
  constexpr size_t kMaxShown = 40;
  const bool cut = text.size() > kMaxShown;
  std::string out;
  out.reserve(kMaxShown + 5);
  out.push_back('\'');
  out.append(text.substr(0, kMaxShown));
  if (cut) out.append("...");
  out.push_back('\'');
  return out;
}

// A CSV trace: a header line naming the columns, then one request per line.
class CsvTraceReader : public TraceRowReader {
 protected:
  CsvTraceReader(std::string path, std::vector<std::string> required_columns)
      : TraceRowReader(std::move(path)) {
    std::string header;
    if (!read_line(header)) {
      throw InputError::at(path_, std::nullopt, "",
                           "expected a CSV header line and rows, the file is empty");
    }
    if (!split_csv_line(header, header_)) fail("header", "expected a CSV header line");
    for (std::string& name : header_) name = std::string(trim(name));
    std::string expected;
    for (const std::string& name : required_columns) {
      expected += (expected.empty() ? "" : ",") + name;
    }
    for (const std::string& name : required_columns) {
      size_t index = 0;
      while (index < header_.size() && header_[index] != name) ++index;
      if (index == header_.size()) {
        fail(name, "expected a header with the columns " + expected + " (this column is missing)");
      }
      column_index_.push_back(index);
    }
  }

  // Reads and splits the next data row; false at the end of the file.
  bool next_fields() {
    if (!read_line(line_)) return false;
    if (!split_csv_line(line_, fields_)) fail("row", "expected a closing quote");
    if (fields_.size() != header_.size()) {
      fail("row", "expected " + std::to_string(header_.size()) + " comma-separated columns, got " +
                      std::to_string(fields_.size()));
    }
    return true;
  }
  const std::string& field(size_t required_index) const {
    return fields_[column_index_[required_index]];
  }
  const std::string& column_name(size_t required_index) const {
    return header_[column_index_[required_index]];
  }
  int32_t token_count(size_t required_index) const {
    const std::optional<int32_t> value = parse_token_count(field(required_index));
    if (!value) {
      fail(column_name(required_index),
           "expected a whole number of tokens >= 0, got " + shown(field(required_index)));
    }
    return *value;
  }

 private:
  std::vector<std::string> header_;
  std::vector<size_t> column_index_;
  std::string line_;
  std::vector<std::string> fields_;
};

// Azure LLM inference trace 2023: TIMESTAMP ('YYYY-MM-DD HH:MM:SS.fffffff'), ContextTokens,
// GeneratedTokens.
class AzureTraceReader final : public CsvTraceReader {
 public:
  explicit AzureTraceReader(std::string path)
      : CsvTraceReader(std::move(path), {"TIMESTAMP", "ContextTokens", "GeneratedTokens"}) {}

  bool next(TraceRow& row) override {
    if (!next_fields()) return false;
    const std::optional<int64_t> time = parse_datetime_ns(field(0));
    if (!time) {
      fail(column_name(0), "expected a time 'YYYY-MM-DD HH:MM:SS.fffffff' from year " +
                               std::to_string(kFirstYear) + " to " + std::to_string(kLastYear) +
                               ", got " + shown(field(0)));
    }
    row.index = next_index_++;
    row.line = line_number();
    row.time_ns = relative_time(*time, column_name(0));
    row.prompt_tokens = token_count(1);
    row.output_tokens = token_count(2);
    row.trace_model.clear();
    row.block_ids.clear();
    return true;
  }
};

// BurstGPT: Timestamp (seconds), Model, Request tokens, Response tokens, Total tokens, Log Type.
// Response tokens == 0 marks a failed request: skipped and counted.
class BurstGptTraceReader final : public CsvTraceReader {
 public:
  explicit BurstGptTraceReader(std::string path)
      : CsvTraceReader(std::move(path),
                       {"Timestamp", "Model", "Request tokens", "Response tokens"}) {}

  bool next(TraceRow& row) override {
    while (next_fields()) {
      const std::optional<int64_t> time = parse_decimal_seconds_ns(field(0));
      if (!time) fail(column_name(0), "expected seconds >= 0, got " + shown(field(0)));
      const int64_t index = next_index_++;
      const int64_t time_ns = relative_time(*time, column_name(0));
      const int32_t prompt_tokens = token_count(2);
      const int32_t output_tokens = token_count(3);
      if (output_tokens == 0) {
        ++failed_rows_;
        continue;
      }
      row.index = index;
      row.line = line_number();
      row.time_ns = time_ns;
      row.prompt_tokens = prompt_tokens;
      row.output_tokens = output_tokens;
      row.trace_model = std::string(trim(field(1)));
      row.block_ids.clear();
      return true;
    }
    return false;
  }
};

// Mooncake FAST'25 JSONL: {"timestamp": ms, "input_length": n, "output_length": n,
// "hash_ids": [...]}.
class MooncakeTraceReader final : public TraceRowReader {
 public:
  explicit MooncakeTraceReader(std::string path) : TraceRowReader(std::move(path)) {}

  bool next(TraceRow& row) override {
    if (!read_line(line_)) return false;
    nlohmann::json object;
    try {
      object = nlohmann::json::parse(line_);
    } catch (const nlohmann::json::parse_error& error) {
      fail("", std::string("expected one JSON object per line (") + error.what() + ")");
    }
    if (!object.is_object()) fail("", "expected one JSON object per line");

    const nlohmann::json& timestamp = member(object, "timestamp");
    int64_t time_ns = 0;
    if (timestamp.is_number_unsigned()) {
      const uint64_t ms = timestamp.get<uint64_t>();
      if (ms > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 1'000'000)) {
        fail("timestamp", "expected milliseconds below 9.2e12, got " + shown(timestamp.dump()));
      }
      time_ns = static_cast<int64_t>(ms) * 1'000'000;
    } else if (timestamp.is_number_float() && timestamp.get<double>() >= 0.0 &&
               timestamp.get<double>() < 9.2e12) {
      time_ns = static_cast<int64_t>(std::llround(timestamp.get<double>() * 1e6));
    } else {
      fail("timestamp", "expected milliseconds >= 0, got " + shown(timestamp.dump()));
    }

    row.index = next_index_++;
    row.line = line_number();
    row.time_ns = relative_time(time_ns, "timestamp");
    row.prompt_tokens = token_count(object, "input_length");
    row.output_tokens = token_count(object, "output_length");
    row.trace_model.clear();
    row.block_ids.clear();
    const nlohmann::json& hash_ids = member(object, "hash_ids");
    if (!hash_ids.is_array()) fail("hash_ids", "expected an array of block ids");
    row.block_ids.reserve(hash_ids.size());
    for (const nlohmann::json& id : hash_ids) {
      if (!id.is_number_unsigned()) {
        fail("hash_ids", "expected whole numbers >= 0, got " + shown(id.dump()));
      }
      row.block_ids.push_back(id.get<uint64_t>());
    }
    return true;
  }

 private:
  const nlohmann::json& member(const nlohmann::json& object, const char* key) const {
    const auto it = object.find(key);
    if (it == object.end()) fail(key, "expected this key in every row, it is missing");
    return *it;
  }
  int32_t token_count(const nlohmann::json& object, const char* key) const {
    const nlohmann::json& value = member(object, key);
    if (!value.is_number_unsigned() ||
        value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      fail(key, "expected a whole number of tokens >= 0, got " + shown(value.dump()));
    }
    return static_cast<int32_t>(value.get<uint64_t>());
  }

  std::string line_;
};

}  // namespace

std::unique_ptr<TraceRowReader> open_trace_rows(const TraceSpec& spec) {
  switch (spec.format) {
    case TraceFormat::azure:
      return std::make_unique<AzureTraceReader>(spec.path);
    case TraceFormat::mooncake:
      return std::make_unique<MooncakeTraceReader>(spec.path);
    case TraceFormat::burstgpt:
      return std::make_unique<BurstGptTraceReader>(spec.path);
  }
  throw InputError::at(spec.origin, std::nullopt, "format",
                       "expected one of azure, mooncake, burstgpt");
}

}  // namespace gangway
