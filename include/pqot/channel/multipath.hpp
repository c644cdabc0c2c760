// Spreading a message over several paths (docs/channel.md, "Multipath"): how many fragments a
// message goes out in, and which path each one takes. SRMCP splits messages into a random number of
// segments on random links (its §8.2); TRIP sends a copy on each path instead and uses the same
// path choice when it has fewer copies than paths.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>

namespace pqot::channel {

/// The fragment count for a message of `total` bytes when one fragment carries at most
/// `room` bytes (room > 0): at least what the size needs, at most max(that, min(`wanted`, `paths`,
/// `allowed`, `total`)), uniformly at random in between. nullopt if the message needs more than
/// `allowed` fragments.
template <class Rng>
std::optional<std::uint32_t> fragment_count(std::uint32_t total, std::uint32_t room, std::uint32_t wanted,
                                            std::uint32_t paths, std::uint32_t allowed, Rng& rng) {
  const std::uint32_t needed = std::max<std::uint32_t>(1, static_cast<std::uint32_t>((std::uint64_t{total} + room - 1) / room));
  if (needed > allowed) return std::nullopt;
  const std::uint32_t upper = std::max(needed, std::min({wanted, paths, allowed, total}));
  if (upper == needed) return needed;
  return needed + static_cast<std::uint32_t>(rng() % (upper - needed + 1));
}

/// A path chosen uniformly among those `usable(path)` accepts, preferring paths `roomy(path)` also
/// accepts (a path whose peer is not reading keeps its queue and gets no new fragments while another
/// has room). `paths` is a range of pointer-like values; returns a null value if no path is usable.
template <class Paths, class Usable, class Roomy, class Rng>
auto pick_path(const Paths& paths, Usable&& usable, Roomy&& roomy, Rng& rng) -> std::remove_cvref_t<decltype(*std::begin(paths))> {
  using Path = std::remove_cvref_t<decltype(*std::begin(paths))>;
  for (const bool roomy_only : {true, false}) {
    const auto eligible = [&](const Path& p) { return usable(p) && (!roomy_only || roomy(p)); };
    std::size_t n = 0;
    for (const Path& p : paths) n += eligible(p) ? 1 : 0;
    if (n == 0) continue;
    std::size_t pick = static_cast<std::size_t>(rng() % n);
    for (const Path& p : paths) {
      if (eligible(p) && pick-- == 0) return p;
    }
  }
  return Path{};
}

}  // namespace pqot::channel
