// One line per event on stderr, with a UTC timestamp and the level:
//   2025-01-31T12:00:00.123Z info client 127.0.0.1:40112 connected (1 of 32)
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pqot::modbus_sim {

enum class LogLevel { debug, info, warn };

std::optional<LogLevel> parse_log_level(std::string_view text);
void set_log_level(LogLevel level);
bool log_enabled(LogLevel level);

/// Writes the line with a single write(2), so lines never interleave.
void log(LogLevel level, std::string_view message);

inline void log_debug(std::string_view m) {
  log(LogLevel::debug, m);
}
inline void log_info(std::string_view m) {
  log(LogLevel::info, m);
}
inline void log_warn(std::string_view m) {
  log(LogLevel::warn, m);
}

}  // namespace pqot::modbus_sim
