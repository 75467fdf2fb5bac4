#include "workload/trace/trace_source.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <utility>

#include "core/input_error.h"
#include "workload/rng.h"

namespace gangway {
namespace {

constexpr uint64_t kMappingTag = 0x6d617070696e67ULL;  // "mapping"
constexpr uint64_t kUniqueTag = 0x756e69717565ULL;     // "unique"
// A group of rows sharing one timestamp is held in memory to be spread; past this size the
// trace is not one that spreading makes sense for.
constexpr size_t kMaxSpreadGroupRows = size_t{1} << 20;

std::string format_seconds(int64_t ns) {
  std::ostringstream out;
  out << static_cast<double>(ns) * 1e-9;
  return out.str();
}

TraceSpec validated(TraceSpec spec) {
  validate(spec);
  return spec;
}

}  // namespace

TraceSource::TraceSource(TraceSpec spec, uint64_t seed, int32_t kv_block_tokens)
    : spec_(validated(std::move(spec))),
      rules_(spec_.rules),
      file_stem_(std::filesystem::path(spec_.path).stem().string()),
      kv_block_tokens_(kv_block_tokens),
      reader_(open_trace_rows(spec_)),
      mapping_salt_(mix_pair(seed, kMappingTag)),
      content_salt_(hash_string(spec_.path)),
      unique_salt_(mix_pair(content_salt_, kUniqueTag)),
      start_ns_(seconds_to_duration(spec_.start_s.value_or(0.0)).count()),
      spread_(spec_.spreads_equal_timestamps()) {
  if (kv_block_tokens_ <= 0) {
    throw InputError::at("", std::nullopt, "kv_block_tokens", "expected a number >= 1");
  }
  if (spec_.end_s) end_ns_ = seconds_to_duration(*spec_.end_s).count();
  if (rules_.empty()) {
    TraceMappingRule everything;
    everything.name = file_stem_;
    rules_.push_back(everything);
  }
  lookahead_ = advance();
  if (lookahead_) return;

  const int64_t request_rows = reader_->rows_read() - reader_->failed_rows();
  std::string message;
  if (request_rows == 0) {
    message = "expected at least one request row, the trace has none";
    if (reader_->failed_rows() > 0) {
      message += " (" + std::to_string(reader_->failed_rows()) + " failed rows skipped)";
    }
  } else if (counters_.unmapped_rows == 0) {
    message = "expected at least one request in the window [" + format_seconds(start_ns_) + " s, " +
              (end_ns_ ? format_seconds(*end_ns_) + " s" : std::string("end")) +
              "), the trace's rows run from 0 s to " + format_seconds(last_time_seen_ns_) + " s";
  } else {
    message = "expected at least one row that a mapping rule takes, none of " +
              std::to_string(counters_.unmapped_rows) + " rows is";
  }
  throw InputError::at(spec_.path, std::nullopt, "", message);
}

TraceSource::~TraceSource() = default;

std::string TraceSource::stream_name(size_t stream) const {
  if (stream >= rules_.size()) return {};
  if (!rules_[stream].name.empty()) return rules_[stream].name;
  return file_stem_ + "/" + std::to_string(stream);
}

TraceSource::Counters TraceSource::counters() const {
  Counters counters = counters_;
  counters.rows_read = reader_->rows_read();
  counters.failed_rows = reader_->failed_rows();
  return counters;
}

std::optional<Time> TraceSource::peek_arrival() const {
  if (!lookahead_) return std::nullopt;
  return lookahead_->spec.arrival;
}

std::optional<WorkloadItem> TraceSource::next() {
  std::optional<WorkloadItem> item = std::move(lookahead_);
  lookahead_ = item ? advance() : std::nullopt;
  return item;
}

bool TraceSource::next_timed_row(TraceRow& row) {
  if (!spread_) return reader_->next(row);
  if (group_pos_ == group_.size() && !fill_group()) return false;
  row = std::move(group_[group_pos_++]);
  return true;
}

bool TraceSource::fill_group() {
  group_.clear();
  group_pos_ = 0;
  if (!carry_) {
    TraceRow first;
    if (!reader_->next(first)) return false;
    carry_ = std::move(first);
  }
  group_.push_back(std::move(*carry_));
  carry_.reset();
  const int64_t group_time = group_.front().time_ns;
  for (;;) {
    TraceRow row;
    if (!reader_->next(row)) break;
    if (row.time_ns != group_time) {
      carry_ = std::move(row);
      break;
    }
    if (group_.size() >= kMaxSpreadGroupRows) {
      throw InputError::at(reader_->path(), row.line, "",
                           "expected fewer than 1048576 rows with one timestamp when spreading "
                           "them (set spread_equal_timestamps off)");
    }
    group_.push_back(std::move(row));
  }
  const int64_t gap = carry_ ? carry_->time_ns - group_time : last_gap_ns_;
  if (carry_) last_gap_ns_ = gap;
  const auto k = static_cast<int64_t>(group_.size());
  for (int64_t i = 1; i < k; ++i) {
    // group_time + gap * i / k without overflow.
    group_[static_cast<size_t>(i)].time_ns = group_time + (gap / k) * i + (gap % k) * i / k;
  }
  return true;
}

std::optional<size_t> TraceSource::map_row(const TraceRow& row) const {
  const double u =
      static_cast<double>(mix_pair(mapping_salt_, static_cast<uint64_t>(row.index)) >> 11) *
      0x1.0p-53;
  double cumulative = 0.0;
  for (size_t i = 0; i < rules_.size(); ++i) {
    const TraceMappingRule& rule = rules_[i];
    if (rule.min_prompt_tokens && row.prompt_tokens < *rule.min_prompt_tokens) continue;
    if (rule.max_prompt_tokens && row.prompt_tokens > *rule.max_prompt_tokens) continue;
    if (rule.trace_model && row.trace_model != *rule.trace_model) continue;
    cumulative += rule.share;
    if (u < cumulative) return i;
  }
  return std::nullopt;
}

WorkloadItem TraceSource::make_item(const TraceRow& row, size_t rule_index) {
  const TraceMappingRule& rule = rules_[rule_index];
  WorkloadItem item;
  item.stream = static_cast<uint16_t>(rule_index);
  item.spec.id = RequestId(static_cast<uint64_t>(counters_.requests++));
  item.spec.model = rule.model;
  item.spec.slo_class = rule.slo_class;
  item.spec.tenant = rule.tenant;
  const double scaled_ns = static_cast<double>(row.time_ns - start_ns_) / spec_.rate_scale;
  item.spec.arrival = Time::from_ns(static_cast<int64_t>(std::floor(scaled_ns + 0.5)));

  const int32_t prompt_tokens = std::max(row.prompt_tokens, 1);
  const int32_t recorded_output = std::max(row.output_tokens, 1);
  item.spec.prompt_tokens = prompt_tokens;
  if (spec_.max_tokens.kind == TraceMaxTokens::Kind::fixed) {
    item.spec.max_tokens = spec_.max_tokens.tokens;
    item.output_tokens = std::min(recorded_output, spec_.max_tokens.tokens);
  } else {
    item.spec.max_tokens = std::max(recorded_output, spec_.max_tokens.tokens);
    item.output_tokens = recorded_output;
  }

  segments_.clear();
  int32_t remaining = prompt_tokens;
  for (const uint64_t block_id : row.block_ids) {
    if (remaining <= 0) break;
    const int32_t tokens = std::min(remaining, spec_.trace_block_tokens);
    segments_.push_back({mix_pair(content_salt_, block_id), tokens});
    remaining -= tokens;
  }
  if (remaining > 0) {
    segments_.push_back({mix_pair(unique_salt_, static_cast<uint64_t>(row.index)), remaining});
  }
  append_block_hashes(segments_, kv_block_tokens_, item.spec.prefix_blocks);
  return item;
}

std::optional<WorkloadItem> TraceSource::advance() {
  TraceRow row;
  while (!done_ && next_timed_row(row)) {
    last_time_seen_ns_ = row.time_ns;
    if (row.time_ns < start_ns_) {
      ++counters_.before_window;
      continue;
    }
    if (end_ns_ && row.time_ns >= *end_ns_) {
      done_ = true;  // rows are in time order: nothing later can be in the window
      break;
    }
    const std::optional<size_t> rule = map_row(row);
    if (!rule) {
      ++counters_.unmapped_rows;
      continue;
    }
    return make_item(row, *rule);
  }
  done_ = true;
  return std::nullopt;
}

TraceLengths read_trace_lengths(const TraceSpec& spec, uint64_t seed) {
  TraceSource source(spec, seed, 1 << 30);  // blocks this large: no hashes to compute
  TraceLengths lengths;
  while (std::optional<WorkloadItem> item = source.next()) {
    lengths.prompt_tokens.push_back(item->spec.prompt_tokens);
    lengths.output_tokens.push_back(item->output_tokens);
  }
  return lengths;
}

}  // namespace gangway
