#include "server/log.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ctime>

#include "server/client_text.h"

namespace gangway {
namespace {

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

// Printable ASCII other than the characters that delimit fields, and well-formed UTF-8 beyond.
bool needs_quotes(std::string_view value) {
  if (value.empty()) return true;
  bool non_ascii = false;
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= ' ' || byte == 0x7f || c == '"' || c == '=' || c == '\\') return true;
    non_ascii = non_ascii || byte >= 0x80;
  }
  return non_ascii && !is_valid_utf8(value);
}

// Values may hold client text (a URL, a header): control characters and bytes that are not
// well-formed UTF-8 are written as escapes, so that a log line stays one line of valid text.
void append_value(std::string& line, std::string_view value) {
  if (!needs_quotes(value)) {
    line.append(value);
    return;
  }
  line.push_back('"');
  for (size_t i = 0; i < value.size();) {
    const char c = value[i];
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      line.push_back('\\');
      line.push_back(c);
    } else if (c == '\n') {
      line.append("\\n");
    } else if (byte < 0x20 || byte == 0x7f) {
      line.append(fmt::format("\\x{:02x}", byte));
    } else if (byte >= 0x80) {
      const size_t length = utf8_sequence_length(value.substr(i));
      if (length == 0) {
        line.append(fmt::format("\\x{:02x}", byte));
      } else {
        line.append(value.substr(i, length));
        i += length;
        continue;
      }
    } else {
      line.push_back(c);
    }
    ++i;
  }
  line.push_back('"');
}

}  // namespace

LogLevel parse_log_level(std::string_view name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "warn") return LogLevel::kWarn;
  if (name == "error") return LogLevel::kError;
  return LogLevel::kInfo;
}

void Logger::log(LogLevel level, std::string_view event,
                 std::initializer_list<LogField> fields) const {
  if (!enabled(level)) return;
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[40];
  const size_t n = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(stamp + n, sizeof stamp - n, ".%03dZ", static_cast<int>(millis));
  std::string line;
  line.reserve(128);
  line.append(stamp).append(" ").append(level_name(level)).append(" ").append(event);
  for (const LogField& field : fields) {
    line.push_back(' ');
    line.append(field.key).push_back('=');
    append_value(line, field.value);
  }
  line.push_back('\n');
  // One write per line: lines from several threads never interleave.
  const char* data = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t written = ::write(fd_, data, left);
    if (written <= 0) break;
    data += written;
    left -= static_cast<size_t>(written);
  }
}

}  // namespace gangway
