// Exact parsers for the fields of trace files: CSV lines, token counts, date-times and decimal
// seconds.
//
// Times are parsed digit by digit into integer nanoseconds rather than through floating point,
// so a replay's arrival times are exact and identical on every platform.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gangway {

// Splits one CSV line into fields (RFC 4180: a field in double quotes may hold commas and ""
// for a quote). False for an unterminated quote.
bool split_csv_line(std::string_view line, std::vector<std::string>& fields);

// Strips leading and trailing spaces and tabs.
std::string_view trim(std::string_view text);

// A whole number in 0..INT32_MAX, nothing else (surrounding spaces allowed).
std::optional<int32_t> parse_token_count(std::string_view text);

// "YYYY-MM-DD HH:MM:SS[.fraction]" (or 'T' between date and time; up to 9 fraction digits) as
// nanoseconds since 1970-01-01 00:00:00 of the same (unstated) time zone, for years from
// kFirstYear to kLastYear (any two such times differ by less than INT64_MAX nanoseconds).
inline constexpr int64_t kFirstYear = 1970;
inline constexpr int64_t kLastYear = 2200;
std::optional<int64_t> parse_datetime_ns(std::string_view text);

// Non-negative decimal seconds ("5", "12.25", ".5"): nanoseconds, digits past the ninth decimal
// ignored.
std::optional<int64_t> parse_decimal_seconds_ns(std::string_view text);

}  // namespace gangway
