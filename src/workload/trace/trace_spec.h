// How to replay a recorded request trace: which file, in which format, which part of it, how
// fast, and which model, SLO class and tenant each row becomes. Plain resolved values (ids, not
// names) that the config layer fills from a scenario file.
//
// Supported formats (see docs and data/traces/README.md):
// - azure: Azure LLM inference trace 2023 CSV (TIMESTAMP,ContextTokens,GeneratedTokens);
// - mooncake: Mooncake FAST'25 JSONL (timestamp ms, input_length, output_length, hash_ids at
//   512-token blocks), the only one with prefix information;
// - burstgpt: BurstGPT CSV (Timestamp,Model,Request tokens,Response tokens,Total tokens,
//   Log Type); rows with Response tokens == 0 are failed requests and are skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"

namespace gangway {

enum class TraceFormat : uint8_t { azure, mooncake, burstgpt };

std::string_view to_string(TraceFormat format);
// "azure", "mooncake" or "burstgpt"; anything else is an InputError at (origin, key) listing them.
TraceFormat parse_trace_format(std::string_view text, const std::string& origin = "",
                               const std::string& key = "format");

// Where a row goes. A row goes to the first rule whose filters (prompt range, trace model) match
// it and whose share it falls in: among the rules that match the row, in order, the row takes
// the first rule whose cumulative share exceeds u, a number in [0, 1) hashed from (seed, row
// index), so replays are identical and a rule of share 0.3 gets 30 % of the rows it matches.
// A row that no rule takes is skipped (counted as unmapped).
struct TraceMappingRule {
  std::string name;  // stream name in reports; empty: "<file stem>/<rule index>"
  ModelId model;
  SloClassId slo_class;
  TenantId tenant;
  double share = 1.0;  // in (0, 1]
  std::optional<int32_t> min_prompt_tokens;
  std::optional<int32_t> max_prompt_tokens;
  std::optional<std::string> trace_model;  // burstgpt's Model column, matched exactly
};

// The max_tokens a replayed request carries (the trace records only what was generated).
struct TraceMaxTokens {
  enum class Kind : uint8_t {
    // max_tokens = max(true output, tokens): the cap never cuts a recorded output short.
    at_least_output,
    // max_tokens = tokens, and the true output is min(recorded output, tokens).
    fixed,
  };
  Kind kind = Kind::at_least_output;
  int32_t tokens = 0;
};

struct TraceSpec {
  std::string path;
  TraceFormat format = TraceFormat::azure;
  // Divides every inter-arrival time (2 = twice the recorded rate). > 0.
  double rate_scale = 1.0;
  // Window, in seconds from the trace's first row: rows outside [start_s, end_s) are skipped,
  // and arrival times are re-based to start_s (then divided by rate_scale).
  std::optional<double> start_s;
  std::optional<double> end_s;
  TraceMaxTokens max_tokens;
  // Empty: every row goes to model 0, SLO class 0, tenant 0 (one stream named after the file).
  std::vector<TraceMappingRule> rules;
  // Spread rows that share a timestamp evenly over the gap to the next distinct timestamp (row
  // i of k at T + i * gap / k; the last group uses the previous gap). Unset: on for mooncake,
  // whose timestamps come in ~3 s batches (90 % of rows share one), off for the others.
  std::optional<bool> spread_equal_timestamps;
  // Tokens per block of the trace's own hash_ids (mooncake: 512).
  int32_t trace_block_tokens = 512;
  // Where this spec was written (e.g. "scenario.yaml:30"), to point validation errors at it.
  std::string origin;

  bool spreads_equal_timestamps() const {
    return spread_equal_timestamps.value_or(format == TraceFormat::mooncake);
  }
};

// Throws InputError::at(origin, -, field, "expected ...") for values the reader cannot use.
void validate(const TraceSpec& spec);

}  // namespace gangway
