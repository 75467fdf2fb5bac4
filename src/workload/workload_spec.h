// What a synthetic workload looks like: plain, resolved values (ids, not names) that the config
// layer fills from a scenario file, and the generators in this folder turn into requests.
//
// A workload is a list of streams. Each stream is one kind of traffic (one model, SLO class and
// tenant) with its own arrival process, prompt and output length distributions, and optionally
// shared system prompts (prefix groups) and multi-turn sessions, the two sources of prefix reuse
// that a KV cache can exploit.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"

namespace gangway {

// When requests arrive. Every rate is multiplied by rate_scale (a load knob: 0.5 = half load).
struct ArrivalSpec {
  enum class Kind : uint8_t {
    poisson,  // rate_per_s
    gamma,    // renewal process: rate_per_s, and cv = coefficient of variation of the gaps
    on_off,   // alternating phases, starting with on; Poisson at each phase's rate
    ramp,     // Poisson with rate linear from start_rate_per_s to end_rate_per_s over ramp_s,
              // then held at end_rate_per_s
  };
  Kind kind = Kind::poisson;
  double rate_per_s = 0.0;
  // Gamma gaps have shape 1/cv^2: cv 1 is Poisson, cv > 1 bursty, cv 0 evenly spaced.
  double cv = 1.0;
  double on_rate_per_s = 0.0;
  double off_rate_per_s = 0.0;
  double on_s = 0.0;
  double off_s = 0.0;
  double start_rate_per_s = 0.0;
  double end_rate_per_s = 0.0;
  double ramp_s = 0.0;
  double rate_scale = 1.0;
};

// A distribution of token counts. Samples are clamped to [min, max] (min >= 1).
struct LengthSpec {
  enum class Kind : uint8_t {
    constant,   // value
    geometric,  // support 1, 2, ...: P(L = k) = p (1-p)^(k-1), p = 1/mean (mean >= 1)
    lognormal,  // from mean and p99 (p99/mean must be below exp(z99^2/2) = 14.97), rounded
    empirical,  // one of `values`, drawn uniformly (e.g. a trace's column)
  };
  Kind kind = Kind::constant;
  int32_t value = 1;
  double mean = 0.0;
  double p99 = 0.0;
  std::vector<int32_t> values;
  int32_t min = 1;
  int32_t max = std::numeric_limits<int32_t>::max();
};

// Shared system prompts. Each request picks one of `groups` prompts, by Zipf(zipf_s) popularity
// (group 0 the most popular), and its prompt is that group's group_tokens tokens followed by
// its own tokens (as many as the stream's prompt length spec gives).
struct PrefixSpec {
  int32_t groups = 1;
  int32_t group_tokens = 0;
  double zipf_s = 1.0;
  // Streams with the same pool name share the same group prompts (group g of pool P is the same
  // text in every such stream). Empty: the stream's own name.
  std::string pool;
};

// Multi-turn sessions (chat): a turn's prompt is the session's whole earlier context (all
// previous prompts and outputs) followed by new user tokens (from the prompt length spec).
// Open loop: turn k+1 arrives think_time after turn k arrived, whether or not k has finished.
//
// The stream's arrival process gives the stream's request rate: new sessions start at
// new_session_probability times each arrival rate, and each session then continues after every
// turn with probability 1 - new_session_probability (geometric number of turns with mean
// 1 / new_session_probability), so that a fraction new_session_probability of requests open a
// session. A session ends early when its next prompt would exceed the stream's
// max_prompt_tokens. At most max_active_sessions sessions are remembered (constant memory): a
// session that starts when that many are active is a one-turn session.
struct SessionSpec {
  double new_session_probability = 1.0;  // = 1 / mean turns per session; in (0, 1]
  double think_time_s = 0.0;             // mean of an exponential
  int32_t max_active_sessions = 10000;

  double mean_turns() const { return 1.0 / new_session_probability; }
};

struct StreamSpec {
  std::string name;
  ModelId model;
  SloClassId slo_class;
  TenantId tenant;
  ArrivalSpec arrival;
  // The request's own (non-shared) prompt tokens: the whole prompt without prefix groups and
  // sessions, the part after the group prompt or the earlier context with them.
  LengthSpec prompt_tokens;
  // The true output length the engine will produce (before the max_tokens cap).
  LengthSpec output_tokens;
  // The request's cap: the true output is min(sampled output, max_tokens).
  int32_t max_tokens = 4096;
  std::optional<PrefixSpec> prefix;
  std::optional<SessionSpec> sessions;
  // Longer prompts are cut to this (first turns) or end their session (later turns).
  int32_t max_prompt_tokens = 32768;
  // Where this stream was written (e.g. "scenario.yaml:14"), to point validation errors at it.
  std::string origin;
};

// Names as a scenario file writes them ("poisson", "on_off", "lognormal", ...); an unknown name
// is an InputError at (origin, key) listing the allowed ones.
std::string_view to_string(ArrivalSpec::Kind kind);
std::string_view to_string(LengthSpec::Kind kind);
ArrivalSpec::Kind parse_arrival_kind(std::string_view text, const std::string& origin,
                                     const std::string& key);
LengthSpec::Kind parse_length_kind(std::string_view text, const std::string& origin,
                                   const std::string& key);

// Each throws InputError::at(origin, -, key + "." + field, "expected ...") for a value the
// generators cannot use (key names the spec, e.g. "chat.prompt_tokens").
void validate(const ArrivalSpec& spec, const std::string& origin, const std::string& key);
void validate(const LengthSpec& spec, const std::string& origin, const std::string& key);
void validate(const PrefixSpec& spec, const std::string& origin, const std::string& key);
void validate(const SessionSpec& spec, const std::string& origin, const std::string& key);
// Checks the whole stream; keys are "<name>.<field>...".
void validate(const StreamSpec& spec);

}  // namespace gangway
