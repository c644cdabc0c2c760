// Reassembly of segmented messages (docs/srmcp.md §8.2) into bounded buffers.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>

#include "pqot/srmcp/wire.hpp"

namespace pqot::srmcp {

class Reassembler {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Reassembler(const Limits& limits) : limits_(limits) {}

  /// Adds a segment already checked by parse_segment(). Returns the whole sealed message when this
  /// was its last missing segment. Throws ProtocolError{drop} for a duplicate segment, one that
  /// disagrees with earlier segments of its message, or when max_reassemblies messages are already
  /// pending.
  std::optional<Bytes> add(const Segment& segment, Clock::time_point now = Clock::now());
  /// Drops partial messages whose first segment arrived before `cutoff`; returns how many.
  std::size_t expire(Clock::time_point cutoff);
  std::size_t pending() const noexcept { return partial_.size(); }

 private:
  struct Partial {
    SegmentHeader first;  // tid, count and total every later segment must match
    Bytes buffer;
    std::uint32_t received_mask = 0;
    Clock::time_point started;
  };

  Limits limits_;
  std::map<std::uint64_t, Partial> partial_;  // by msg_seq
};

}  // namespace pqot::srmcp
