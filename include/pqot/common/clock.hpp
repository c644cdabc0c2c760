// Wall-clock time as the wire formats carry it: since the Unix epoch, in seconds (SRMCP) or
// milliseconds (SRUP-PQ timestamps).
#pragma once

#include <chrono>
#include <cstdint>

namespace pqot::common {

/// Seconds since 1970-01-01T00:00:00Z, truncated to 32 bits (wraps in 2106).
inline std::uint32_t unix_time_s() {
  return static_cast<std::uint32_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

/// Milliseconds since 1970-01-01T00:00:00Z.
inline std::uint64_t unix_time_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

}  // namespace pqot::common
