// The channel layer's replay window (docs/channel.md, "Replay window"; SRMCP §10 uses it): exact
// width, agreement with a set, and saved state that restores the same window or is refused.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "pqot/channel/replay_window.hpp"

namespace pqot::channel {
namespace {

TEST(ChannelReplayWindow, AcceptsNewRejectsSeenAndTooOld) {
  ReplayWindow w;
  EXPECT_TRUE(w.accept(0));
  EXPECT_FALSE(w.accept(0));
  EXPECT_TRUE(w.accept(5));
  EXPECT_TRUE(w.accept(3));
  EXPECT_FALSE(w.accept(3));
  EXPECT_TRUE(w.accept(2000));
  EXPECT_FALSE(w.accept(5)) << "far older than the window";
  EXPECT_TRUE(w.accept(1990));
  EXPECT_FALSE(w.accept(1990));
  // A huge jump clears everything but still rejects the old numbers.
  EXPECT_TRUE(w.accept(1ull << 40));
  EXPECT_FALSE(w.accept(2000));
  EXPECT_TRUE(w.accept((1ull << 40) - 1));
}

TEST(ChannelReplayWindow, MatchesASetWithinTheWindow) {
  ReplayWindow w;
  std::set<std::uint64_t> seen;
  std::mt19937_64 rng(1);
  std::uint64_t base = 0;
  for (int i = 0; i < 20000; ++i) {
    base += rng() % 4;
    const std::uint64_t seq = base + rng() % 64 - std::min<std::uint64_t>(base, rng() % 64);
    const bool fresh = !seen.count(seq);
    const bool in_window = w.highest() < seq || w.highest() - seq < ReplayWindow::kWindowBits;
    const bool accepted = w.accept(seq);
    if (in_window) {
      EXPECT_EQ(accepted, fresh) << seq;
    } else {
      EXPECT_FALSE(accepted) << seq << " is older than the window";
    }
    if (!fresh) {
      EXPECT_FALSE(accepted) << seq;
    }
    if (accepted) seen.insert(seq);
  }
}

// The window is exactly the last 1,024 numbers, wherever the highest falls in a 64-bit word.
TEST(ChannelReplayWindow, WidthIsExactly1024) {
  for (std::uint64_t highest : {1023ull, 1024ull, 2000ull, 2047ull, 4096ull + 63, (1ull << 40) + 17}) {
    ReplayWindow w;
    ASSERT_TRUE(w.accept(highest));
    EXPECT_TRUE(w.accept(highest - 1023)) << highest;
    if (highest >= 1024) {
      EXPECT_FALSE(w.accept(highest - 1024)) << highest;
    }
    EXPECT_FALSE(w.accept(highest - 1023)) << "seen";
    for (std::uint64_t back = 1; back < 1023; back += 37) EXPECT_TRUE(w.accept(highest - back)) << highest << " " << back;
  }
}

// A receiver that restarts from saved state refuses exactly what it refused before.
TEST(ChannelReplayWindow, SavedStateRestoresTheSameWindow) {
  std::mt19937_64 rng(7);
  for (std::uint64_t start : {0ull, 60ull, 1ull << 33}) {
    ReplayWindow w;
    EXPECT_EQ(ReplayWindow::restore(w.save()), w) << "empty window";
    std::uint64_t base = start;
    for (int i = 0; i < 3000; ++i) {
      base += rng() % 3;
      w.accept(base - std::min<std::uint64_t>(base, rng() % 200));
    }
    const ReplayWindow back = ReplayWindow::restore(w.save());
    EXPECT_EQ(back, w);
    EXPECT_EQ(back.save(), w.save());
    for (std::uint64_t seq = w.highest() - std::min<std::uint64_t>(w.highest(), 1100); seq <= w.highest() + 5; ++seq) {
      EXPECT_EQ(back.would_accept(seq), w.would_accept(seq)) << seq;
    }
  }
}

TEST(ChannelReplayWindow, DocumentedStateLayout) {
  ReplayWindow w;
  w.accept(0x0102030405060708ull);
  const auto s = w.save();
  ASSERT_EQ(s.size(), 146u);
  EXPECT_EQ(s[0], 1) << "version";
  EXPECT_EQ(s[1], 1) << "flags: a number was seen";
  const std::uint8_t highest[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_TRUE(std::equal(highest, highest + 8, s.begin() + 2));
  // 0x0102030405060708 is bit 8 of word (seq / 64) % 17 in ring order.
  const std::size_t word = (0x0102030405060708ull / 64) % 17;
  EXPECT_EQ(s[10 + 8 * word + 6], 0x01) << "bit 8 of a big-endian word";
}

TEST(ChannelReplayWindow, CorruptStateIsRefused) {
  ReplayWindow w;
  for (std::uint64_t seq : {100ull, 98ull, 40ull}) w.accept(seq);
  const auto good = w.save();
  const auto refused = [](auto bytes) {
    EXPECT_THROW(ReplayWindow::restore(bytes), std::invalid_argument);
  };
  refused(std::span<const std::uint8_t>(good).first(good.size() - 1));
  auto bad = good;
  bad[0] = 2;  // version
  refused(bad);
  bad = good;
  bad[1] = 3;  // unknown flag
  refused(bad);
  bad = good;
  bad[9] = 101;  // highest 101 is not recorded
  refused(bad);
  bad = good;
  const std::size_t word = (100 / 64) % 17;
  bad[10 + 8 * word] |= 0x80;  // number 127 > highest
  refused(bad);
  ReplayWindow::State empty = ReplayWindow{}.save();
  empty[20] = 1;  // bits in a window that saw nothing
  refused(empty);
  EXPECT_EQ(ReplayWindow::restore(good), w);
}

}  // namespace
}  // namespace pqot::channel
