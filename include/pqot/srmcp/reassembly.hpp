// Reassembly of segmented messages (docs/srmcp.md §8.2) into bounded buffers. Memory follows what
// has arrived, not what a first segment announces: each segment's bytes are kept as they come and
// joined when the last one is in. Partial bytes are bounded per reassembler (a session) and,
// optionally, by a budget shared by all sessions of a server.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "pqot/srmcp/wire.hpp"

namespace pqot::srmcp {

/// Bytes held in partial messages by every session of a server, against one cap.
class ReassemblyBudget {
 public:
  explicit ReassemblyBudget(std::size_t cap) : cap_(cap) {}
  bool take(std::size_t n) noexcept {
    std::size_t used = used_.load(std::memory_order_relaxed);
    do {
      if (used + n > cap_) return false;
    } while (!used_.compare_exchange_weak(used, used + n, std::memory_order_relaxed));
    return true;
  }
  void give_back(std::size_t n) noexcept { used_.fetch_sub(n, std::memory_order_relaxed); }
  std::size_t used() const noexcept { return used_.load(std::memory_order_relaxed); }
  std::size_t cap() const noexcept { return cap_; }

 private:
  const std::size_t cap_;
  std::atomic<std::size_t> used_{0};
};

class Reassembler {
 public:
  using Clock = std::chrono::steady_clock;

  /// `max_bytes`: partial bytes this reassembler may hold (0 = limits.max_message *
  /// limits.max_reassemblies, i.e. no extra bound); `shared`: an optional server-wide budget.
  explicit Reassembler(const Limits& limits, std::size_t max_bytes = 0,
                       std::shared_ptr<ReassemblyBudget> shared = nullptr);
  ~Reassembler();
  Reassembler(const Reassembler&) = delete;
  Reassembler& operator=(const Reassembler&) = delete;

  /// Adds a segment already checked by parse_segment(). Returns the whole sealed message when this
  /// was its last missing segment. Throws ProtocolError{drop} for a duplicate segment, one that
  /// disagrees with earlier segments of its message, when max_reassemblies messages are already
  /// pending, or when its bytes would exceed this reassembler's bound or the shared budget.
  std::optional<Bytes> add(const Segment& segment, Clock::time_point now = Clock::now());
  /// Drops partial messages whose first segment arrived before `cutoff`; returns how many.
  std::size_t expire(Clock::time_point cutoff);
  /// When the oldest partial message started (nullopt if there is none): for an expiry timer.
  std::optional<Clock::time_point> oldest() const;
  std::size_t pending() const noexcept { return partial_.size(); }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  struct Partial {
    SegmentHeader first;      // tid, count and total every later segment must match
    std::vector<Bytes> parts; // by segment index, as they arrive
    std::uint32_t received_mask = 0;
    std::size_t bytes = 0;
    Clock::time_point started;
  };
  void release(std::size_t n) noexcept;

  Limits limits_;
  std::size_t max_bytes_;
  std::shared_ptr<ReassemblyBudget> shared_;
  std::size_t bytes_ = 0;
  std::map<std::uint64_t, Partial> partial_;  // by msg_seq
};

}  // namespace pqot::srmcp
