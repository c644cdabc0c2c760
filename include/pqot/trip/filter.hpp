// TRIP's filter for one flow (docs/trip.md §8): which authenticated copy of a label is delivered.
// One 1,024-label window per reflector boot, the current boot and the one before it (for copies
// of the old boot still in flight); a boot becomes current when a session of it completes its
// handshake, never because a datagram names it. Called only after a datagram authenticated.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>

#include "pqot/channel/replay_window.hpp"

namespace pqot::trip {

enum class FilterVerdict {
  deliver,       ///< the first copy of a label, in order
  deliver_late,  ///< the first copy of a label lower than the highest delivered (reordered)
  duplicate,     ///< a label already delivered: a slower copy
  too_old,       ///< older than the window, or than max_age
  stale_boot,    ///< a boot this flow no longer keeps a window for
};

/// Whether the datagram is to be delivered.
constexpr bool delivers(FilterVerdict v) noexcept {
  return v == FilterVerdict::deliver || v == FilterVerdict::deliver_late;
}

class FlowFilter {
 public:
  using Clock = std::chrono::steady_clock;

  /// `boot_grace`: how long the previous boot's window is kept after a new boot started;
  /// `max_age`: zero for none, else a label lower than the highest is dropped once the highest
  /// arrived more than this long ago (docs/trip.md §8).
  FlowFilter(Clock::duration boot_grace, Clock::duration max_age) : boot_grace_(boot_grace), max_age_(max_age) {}

  /// A session of reflector boot `boot` completed its handshake. The same boot as the current one:
  /// nothing changes. Another: it becomes current with an empty window, the current one becomes
  /// the previous one (the one before that is dropped). A boot coming back from previous becomes
  /// current again with its window (two reflectors under one identity would alternate; the caller
  /// logs that).
  void start_boot(std::uint64_t boot, Clock::time_point now);
  /// Whether `boot`'s window was dropped: a session claiming it again must be refused, or copies
  /// of that boot replayed in order would be delivered a second time into a fresh window. The
  /// last kRetiredBoots dropped are remembered.
  bool boot_retired(std::uint64_t boot) const noexcept;
  static constexpr std::size_t kRetiredBoots = 16;

  /// The verdict for an authenticated copy of `label` sent by reflector boot `boot`; records the
  /// label if it is delivered.
  FilterVerdict accept(std::uint64_t boot, std::uint64_t label, Clock::time_point now);

  std::optional<std::uint64_t> current_boot() const noexcept;
  /// The highest label delivered for the current boot, if any.
  std::optional<std::uint64_t> highest() const noexcept;

 private:
  struct BootWindow {
    explicit BootWindow(std::uint64_t b) : boot(b) {}
    std::uint64_t boot;
    channel::ReplayWindow window;
    Clock::time_point highest_at{};
    Clock::time_point retired{};
  };
  BootWindow* find(std::uint64_t boot, Clock::time_point now);

  void retire(const BootWindow& w) noexcept;

  Clock::duration boot_grace_;
  Clock::duration max_age_;
  std::array<std::uint64_t, kRetiredBoots> retired_{};  // 0: empty (boots are never 0)
  std::size_t retired_next_ = 0;
  std::optional<BootWindow> current_;
  std::optional<BootWindow> previous_;
};

}  // namespace pqot::trip
