// SRMCP's segments (docs/srmcp.md §8.2) through the channel reassembler
// (pqot/channel/reassembly.hpp): segments checked by parse_segment() go in, whole sealed messages
// come out, and every refusal is a ProtocolError{drop} with the status §8.2 gives it.
#pragma once

#include <memory>
#include <optional>

#include "pqot/channel/reassembly.hpp"
#include "pqot/srmcp/wire.hpp"

namespace pqot::srmcp {

using channel::ReassemblyBudget;

class Reassembler {
 public:
  using Clock = channel::Reassembler::Clock;

  /// `max_bytes`: partial bytes this reassembler may hold (0 = limits.max_message *
  /// limits.max_reassemblies, i.e. no extra bound); `shared`: an optional server-wide budget.
  explicit Reassembler(const Limits& limits, std::size_t max_bytes = 0,
                       std::shared_ptr<ReassemblyBudget> shared = nullptr);

  /// Adds a segment already checked by parse_segment(). Returns the whole sealed message when this
  /// was its last missing segment. Throws ProtocolError{drop}: BAD_REQUEST for a duplicate segment
  /// or one that disagrees with earlier segments of its message, TOO_LARGE when max_reassemblies
  /// messages are already pending or its bytes would exceed this reassembler's bound or the budget.
  std::optional<Bytes> add(const Segment& segment, Clock::time_point now = Clock::now());
  /// Whether `segment` is a whole message (count 1): its bytes are the sealed message, with no
  /// copy. The same checks and ProtocolErrors as add(); false for a part (to be add()ed).
  static bool is_whole(const Segment& segment);
  std::size_t expire(Clock::time_point cutoff) { return inner_.expire(cutoff); }
  std::optional<Clock::time_point> oldest() const { return inner_.oldest(); }
  std::size_t pending() const noexcept { return inner_.pending(); }
  std::size_t bytes() const noexcept { return inner_.bytes(); }

 private:
  channel::Reassembler inner_;
};

}  // namespace pqot::srmcp
