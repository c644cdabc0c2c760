#include "log.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>

namespace pqot::modbus_sim {

namespace {

LogLevel g_level = LogLevel::info;  // the process is single-threaded

std::string_view level_name(LogLevel level) {
  switch (level) {
    case LogLevel::debug:
      return "debug";
    case LogLevel::info:
      return "info";
    case LogLevel::warn:
      return "warn";
  }
  return "?";
}

std::string timestamp() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t secs = system_clock::to_time_t(now);
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char text[32];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(text + n, sizeof text - n, ".%03dZ", static_cast<int>(ms));
  return text;
}

}  // namespace

std::optional<LogLevel> parse_log_level(std::string_view text) {
  for (const auto level : {LogLevel::debug, LogLevel::info, LogLevel::warn}) {
    if (text == level_name(level)) return level;
  }
  return std::nullopt;
}

void set_log_level(LogLevel level) {
  g_level = level;
}

bool log_enabled(LogLevel level) {
  return level >= g_level;
}

void log(LogLevel level, std::string_view message) {
  if (!log_enabled(level)) return;
  std::string line = timestamp();
  line += ' ';
  line += level_name(level);
  line += ' ';
  line += message;
  line += '\n';
  // stderr may be a closed pipe or a full disk: a lost log line must not stop the device.
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace pqot::modbus_sim
