// Fuzzes the restore of saved replay-window state (docs/channel.md, "Replay window state"): a
// corrupted or hostile state file must be refused with std::invalid_argument or restore a window
// that saves back to the same bytes and behaves like a window.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <stdexcept>

#include "pqot/channel/replay_window.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using pqot::channel::ReplayWindow;
  ReplayWindow w;
  try {
    w = ReplayWindow::restore(std::span<const std::uint8_t>(data, size));
  } catch (const std::invalid_argument&) {
    return 0;
  }
  const auto saved = w.save();
  if (saved.size() != size || !std::equal(saved.begin(), saved.end(), data)) std::abort();
  // Within the window, a number is refused exactly when the state records it: a restored window
  // never accepts a replay of a number it had seen.
  if (!w.empty()) {
    const std::uint64_t h = w.highest();
    for (std::uint64_t seq = h - std::min<std::uint64_t>(h, ReplayWindow::kWindowBits - 1);; ++seq) {
      const std::size_t word = (seq / 64) % ReplayWindow::kWords;
      const std::uint8_t byte = data[10 + 8 * word + 7 - (seq % 64) / 8];
      const bool recorded = (byte >> (seq % 8)) & 1u;
      if (w.would_accept(seq) == recorded) std::abort();
      if (seq == h) break;
    }
  }
  if (!w.empty()) {
    if (w.would_accept(w.highest()) || w.accept(w.highest())) std::abort();  // the highest is recorded
    const std::uint64_t next = w.highest() + 1;
    if (next != 0 && (!w.accept(next) || w.accept(next))) std::abort();
  }
  return 0;
}
