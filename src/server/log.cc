#include "server/log.h"

#include <unistd.h>

#include <chrono>
#include <ctime>

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

bool needs_quotes(std::string_view value) {
  if (value.empty()) return true;
  for (char c : value) {
    if (c == ' ' || c == '"' || c == '=' || c == '\n' || c == '\\') return true;
  }
  return false;
}

void append_value(std::string& line, std::string_view value) {
  if (!needs_quotes(value)) {
    line.append(value);
    return;
  }
  line.push_back('"');
  for (char c : value) {
    if (c == '"' || c == '\\') {
      line.push_back('\\');
      line.push_back(c);
    } else if (c == '\n') {
      line.append("\\n");
    } else {
      line.push_back(c);
    }
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
