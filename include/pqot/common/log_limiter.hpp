// Rate limit for log lines that a peer can cause (refused handshakes, protocol violations): at
// most `burst` lines per `interval`; the rest are counted, and the first line of the next interval
// says how many were left out. Every refusal is still counted in the metrics; only the log is
// bounded. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace pqot::common {

class LogLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  static constexpr std::uint32_t kDefaultBurst = 10;
  static constexpr Clock::duration kDefaultInterval = std::chrono::seconds(10);

  LogLimiter(std::uint32_t burst = kDefaultBurst, Clock::duration interval = kDefaultInterval)
      : burst_(burst), interval_(interval) {}

  struct Permit {
    bool log = false;              ///< write this line
    std::uint64_t suppressed = 0;  ///< lines left out since the last one written (say so)
  };

  Permit allow(Clock::time_point now = Clock::now()) {
    std::lock_guard lock(mutex_);
    if (now - window_start_ >= interval_) {
      window_start_ = now;
      used_ = 0;
    }
    if (used_ >= burst_) {
      ++suppressed_;
      return {};
    }
    ++used_;
    Permit p{true, suppressed_};
    suppressed_ = 0;
    return p;
  }

 private:
  const std::uint32_t burst_;
  const Clock::duration interval_;
  std::mutex mutex_;
  Clock::time_point window_start_{};
  std::uint32_t used_ = 0;
  std::uint64_t suppressed_ = 0;
};

}  // namespace pqot::common
