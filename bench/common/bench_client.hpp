// What every C++ bench client shares (bench/README.md, "The bench-client contract"): wall-clock
// timing, CPU time of the client and of the server process, bytes on the wire from /proc/net/dev,
// and the JSON object printed on stdout.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace pqot::bench {

using Clock = std::chrono::steady_clock;

inline double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

/// User+system CPU time of this process, in microseconds.
inline double self_cpu_us() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto us = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) * 1e6 + static_cast<double>(tv.tv_usec); };
  return us(ru.ru_utime) + us(ru.ru_stime);
}

/// User+system CPU time of process `pid` (utime + stime of /proc/PID/stat), in microseconds;
/// nullopt if it cannot be read.
inline std::optional<double> process_cpu_us(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return std::nullopt;
  // The command name (field 2) may hold spaces: fields are counted after its closing parenthesis.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && (fields >> field); ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  return static_cast<double>(utime + stime) * 1e6 / tick;
}

/// Bytes on the wire seen by this network namespace so far: tx bytes of `lo` (each packet counted
/// once) plus rx+tx bytes of every other interface, from /proc/net/dev.
inline std::uint64_t namespace_wire_bytes() {
  std::ifstream in("/proc/net/dev");
  std::string line;
  std::uint64_t total = 0;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    std::istringstream fields(line.substr(colon + 1));
    std::uint64_t v[16] = {};
    for (auto& x : v) fields >> x;
    const std::uint64_t rx = v[0], tx = v[8];
    total += name == "lo" ? tx : rx + tx;
  }
  return total;
}

/// Measures one phase: construct before it, add() each sample, finish() after it.
class Phase {
 public:
  explicit Phase(std::optional<long> server_pid) : server_pid_(server_pid) {
    bytes0_ = namespace_wire_bytes();
    cpu0_ = self_cpu_us();
    if (server_pid_) server_cpu0_ = process_cpu_us(*server_pid_);
  }
  void add(double us) { samples_.push_back(us); }
  std::size_t size() const { return samples_.size(); }

  nlohmann::json finish() const {
    nlohmann::json j;
    j["samples_us"] = samples_;
    j["bytes"] = namespace_wire_bytes() - bytes0_;
    j["cpu_client_us"] = self_cpu_us() - cpu0_;
    std::optional<double> server_cpu1;
    if (server_pid_) server_cpu1 = process_cpu_us(*server_pid_);
    if (server_cpu0_ && server_cpu1) {
      j["cpu_server_us"] = *server_cpu1 - *server_cpu0_;
    } else {
      j["cpu_server_us"] = nullptr;
    }
    return j;
  }

 private:
  std::optional<long> server_pid_;
  std::uint64_t bytes0_ = 0;
  double cpu0_ = 0;
  std::optional<double> server_cpu0_;
  std::vector<double> samples_;
};

/// The value of write i in the write phase.
inline int write_value(std::size_t i) { return static_cast<int>((i * 7 + 1) % 30000); }

}  // namespace pqot::bench
