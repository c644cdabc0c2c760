// Reassembly of messages sent in fragments, possibly over several paths and in any order
// (docs/channel.md, "Reassembly"), into bounded buffers. Memory follows what has arrived, not what
// a first fragment announces: each fragment's bytes are kept as they come and joined when the last
// one is in. Partial bytes are bounded per reassembler (one peer's session) and, optionally, by a
// budget shared by all sessions of a server. Partial messages expire by age (expire(), driven by
// the owner's timer).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "pqot/crypto/bytes.hpp"

namespace pqot::channel {

using crypto::Bytes;
using crypto::ByteView;

/// Bytes held in partial messages against one cap: all sessions of a server, or all sessions of
/// one peer identity. A budget with a parent takes from both (a peer's budget inside the
/// server's), so one peer cannot hold the whole server-wide budget.
class ReassemblyBudget {
 public:
  explicit ReassemblyBudget(std::size_t cap, std::shared_ptr<ReassemblyBudget> parent = nullptr)
      : cap_(cap), parent_(std::move(parent)) {}
  bool take(std::size_t n) noexcept {
    std::size_t used = used_.load(std::memory_order_relaxed);
    do {
      if (used + n > cap_) return false;
    } while (!used_.compare_exchange_weak(used, used + n, std::memory_order_relaxed));
    if (parent_ && !parent_->take(n)) {
      used_.fetch_sub(n, std::memory_order_relaxed);
      return false;
    }
    return true;
  }
  void give_back(std::size_t n) noexcept {
    used_.fetch_sub(n, std::memory_order_relaxed);
    if (parent_) parent_->give_back(n);
  }
  std::size_t used() const noexcept { return used_.load(std::memory_order_relaxed); }
  std::size_t cap() const noexcept { return cap_; }

 private:
  const std::size_t cap_;
  const std::shared_ptr<ReassemblyBudget> parent_;
  std::atomic<std::size_t> used_{0};
};

/// One fragment as the protocol's parser delivered it. The parser checks the protocol's own rules
/// (offsets, sizes); the reassembler checks that fragments of one message agree.
struct Fragment {
  std::uint64_t message = 0;  ///< which message (unique per sender and key epoch range)
  std::uint32_t tag = 0;      ///< a value every fragment of the message must repeat (SRMCP: tid)
  std::uint16_t index = 0;    ///< 0 .. count-1
  std::uint16_t count = 1;    ///< 1 .. kMaxFragments
  std::uint32_t total = 0;    ///< the whole message's size in bytes
  ByteView data;              ///< this fragment's bytes, in index order they make the message
};

class ReassemblyError : public std::runtime_error {
 public:
  enum class Kind {
    too_many_messages,  ///< max_messages partial messages are pending already
    inconsistent,       ///< disagrees with earlier fragments, or the parts do not add up
    duplicate,          ///< this index arrived before
    over_limit,         ///< the reassembler's own byte bound
    over_budget,        ///< the shared budget
  };
  ReassemblyError(Kind kind, const char* what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const noexcept { return kind_; }

 private:
  Kind kind_;
};

class Reassembler {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::uint16_t kMaxFragments = 32;

  /// At most `max_messages` partial messages and `max_bytes` partial bytes; `shared`: an optional
  /// server-wide budget the bytes are also taken from.
  Reassembler(std::size_t max_messages, std::size_t max_bytes,
              std::shared_ptr<ReassemblyBudget> shared = nullptr);
  ~Reassembler();
  Reassembler(const Reassembler&) = delete;
  Reassembler& operator=(const Reassembler&) = delete;

  /// Adds a fragment. Returns the whole message when this was its last missing fragment (a
  /// one-fragment message at once). Throws ReassemblyError, keeping nothing of the fragment.
  std::optional<Bytes> add(const Fragment& fragment, Clock::time_point now = Clock::now());
  /// Whether `fragment` is a whole message by itself (count 1), which needs no buffer: the
  /// caller uses its bytes where they are. Throws ReassemblyError as add() would for a fragment
  /// that is not valid; false for a valid part of a larger message (for add()).
  static bool is_whole(const Fragment& fragment);
  /// Drops partial messages whose first fragment arrived before `cutoff`; returns how many.
  std::size_t expire(Clock::time_point cutoff);
  /// When the oldest partial message started (nullopt if there is none): for an expiry timer.
  std::optional<Clock::time_point> oldest() const;
  std::size_t pending() const noexcept { return partial_.size(); }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  struct Partial {
    Fragment first;            // tag, count and total every later fragment must match (data unused)
    std::vector<Bytes> parts;  // by index, as they arrive
    std::uint32_t received_mask = 0;
    std::size_t bytes = 0;
    Clock::time_point started;
  };
  void release(std::size_t n) noexcept;

  std::size_t max_messages_;
  std::size_t max_bytes_;
  std::shared_ptr<ReassemblyBudget> shared_;
  std::size_t bytes_ = 0;
  std::map<std::uint64_t, Partial> partial_;  // by message
};

}  // namespace pqot::channel
