// Structured log lines for the server and the load generator: one line per event on stderr,
// "TIME LEVEL EVENT key=value ...", values quoted when they hold spaces, so that both a person
// and a log shipper read them.
//
// Why not a logging library: the server logs little (start, stop, cut-off clients, errors; each
// request only at debug level), and one write(2) per line keeps lines whole when several threads
// log at once, without a lock. The Logger is passed to whoever logs; there is no global logger.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace gangway {

enum class LogLevel : uint8_t { kDebug, kInfo, kWarn, kError };

// "debug", "info", "warn", "error"; anything else is info.
LogLevel parse_log_level(std::string_view name);

struct LogField {
  LogField(std::string_view k, std::string_view v) : key(k), value(v) {}
  LogField(std::string_view k, const std::string& v) : key(k), value(v) {}
  LogField(std::string_view k, const char* v) : key(k), value(v) {}
  template <typename Number, typename = std::enable_if_t<std::is_arithmetic_v<Number> &&
                                                         !std::is_same_v<Number, bool>>>
  LogField(std::string_view k, Number v) : key(k), value(format_number(v)) {}
  LogField(std::string_view k, bool v) : key(k), value(v ? "true" : "false") {}

  std::string_view key;
  std::string value;

 private:
  template <typename Number>
  static std::string format_number(Number v) {
    if constexpr (std::is_floating_point_v<Number>) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.4g", static_cast<double>(v));
      return buffer;
    } else {
      return std::to_string(v);
    }
  }
};

class Logger {
 public:
  explicit Logger(LogLevel level = LogLevel::kInfo, int fd = 2) : level_(level), fd_(fd) {}

  bool enabled(LogLevel level) const { return level >= level_; }
  void log(LogLevel level, std::string_view event, std::initializer_list<LogField> fields) const;
  void debug(std::string_view event, std::initializer_list<LogField> fields = {}) const {
    if (enabled(LogLevel::kDebug)) log(LogLevel::kDebug, event, fields);
  }
  void info(std::string_view event, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::kInfo, event, fields);
  }
  void warn(std::string_view event, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::kWarn, event, fields);
  }
  void error(std::string_view event, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::kError, event, fields);
  }

 private:
  LogLevel level_;
  int fd_;
};

}  // namespace gangway
