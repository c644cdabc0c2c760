// Fuzzes the restore of saved replay-window state (docs/channel.md, "Replay window state"): a
// corrupted or hostile state file must be refused with std::invalid_argument or restore a window
// that saves back to the same bytes and behaves like a window.
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
  if (!w.empty()) {
    if (w.would_accept(w.highest()) || w.accept(w.highest())) std::abort();  // the highest is recorded
    const std::uint64_t next = w.highest() + 1;
    if (next != 0 && (!w.accept(next) || w.accept(next))) std::abort();
  }
  return 0;
}
