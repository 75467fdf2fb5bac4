#include "workload/trace/trace_text.h"

#include <charconv>
#include <limits>

namespace gangway {

bool split_csv_line(std::string_view line, std::vector<std::string>& fields) {
  fields.clear();
  std::string field;
  size_t i = 0;
  for (;;) {
    field.clear();
    if (i < line.size() && line[i] == '"') {
      ++i;
      for (;;) {
        if (i >= line.size()) return false;  // unterminated quote
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field.push_back(line[i++]);
      }
      // Anything between the closing quote and the next comma is kept as written.
      while (i < line.size() && line[i] != ',') field.push_back(line[i++]);
    } else {
      while (i < line.size() && line[i] != ',') field.push_back(line[i++]);
    }
    fields.push_back(field);
    if (i >= line.size()) return true;
    ++i;  // the comma
  }
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::optional<int32_t> parse_token_count(std::string_view text) {
  text = trim(text);
  if (text.empty() || text.front() == '-' || text.front() == '+') return std::nullopt;
  int32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

namespace {

// Reads exactly `digits` decimal digits at text[pos...].
std::optional<int64_t> fixed_digits(std::string_view text, size_t pos, size_t digits) {
  if (pos + digits > text.size()) return std::nullopt;
  int64_t value = 0;
  for (size_t i = pos; i < pos + digits; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// Days from 1970-01-01 to the given proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t days_from_civil(int64_t year, int64_t month, int64_t day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t year_of_era = year - era * 400;
  const int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

int64_t days_in_month(int64_t year, int64_t month) {
  static constexpr int64_t kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// ".ddd..." after whole seconds: nanoseconds; `pos` at the '.'. Digits past the ninth ignored.
std::optional<int64_t> fraction_ns(std::string_view text, size_t pos) {
  if (pos >= text.size()) return int64_t{0};
  if (text[pos] != '.' || pos + 1 >= text.size()) return std::nullopt;
  int64_t ns = 0;
  int64_t place = 100'000'000;
  for (size_t i = pos + 1; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    ns += (text[i] - '0') * place;
    place /= 10;
  }
  return ns;
}

}  // namespace

std::optional<int64_t> parse_datetime_ns(std::string_view text) {
  text = trim(text);
  // YYYY-MM-DD HH:MM:SS
  // 0123456789012345678
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' ||
      (text[10] != ' ' && text[10] != 'T') || text[13] != ':' || text[16] != ':') {
    return std::nullopt;
  }
  const auto year = fixed_digits(text, 0, 4);
  const auto month = fixed_digits(text, 5, 2);
  const auto day = fixed_digits(text, 8, 2);
  const auto hour = fixed_digits(text, 11, 2);
  const auto minute = fixed_digits(text, 14, 2);
  const auto second = fixed_digits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  // Years outside kFirstYear..kLastYear would overflow nanoseconds (int64 holds 1677 to 2262),
  // or the difference of two rows' times.
  if (*year < kFirstYear || *year > kLastYear || *month < 1 || *month > 12 || *day < 1 ||
      *day > days_in_month(*year, *month) || *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  const auto fraction = fraction_ns(text, 19);
  if (!fraction) return std::nullopt;
  const int64_t seconds =
      days_from_civil(*year, *month, *day) * 86400 + *hour * 3600 + *minute * 60 + *second;
  return seconds * 1'000'000'000 + *fraction;
}

std::optional<int64_t> parse_decimal_seconds_ns(std::string_view text) {
  text = trim(text);
  size_t i = 0;
  int64_t whole = 0;
  constexpr int64_t kMaxWholeSeconds = std::numeric_limits<int64_t>::max() / 1'000'000'000 - 1;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    whole = whole * 10 + (text[i] - '0');
    if (whole > kMaxWholeSeconds) return std::nullopt;
    ++i;
  }
  if (i == 0 && (i >= text.size() || text[i] != '.')) return std::nullopt;
  const auto fraction = fraction_ns(text, i);
  if (!fraction) return std::nullopt;
  return whole * 1'000'000'000 + *fraction;
}

}  // namespace gangway
