// Admission control and log rate limits (include/pqot/common/admission.hpp, log_limiter.hpp,
// printable.hpp, share_budget.hpp): the pieces srmcpd's pre-authentication bounds and the SRUP-PQ
// C2's queue bounds are built from.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "pqot/common/admission.hpp"
#include "pqot/common/log_limiter.hpp"
#include "pqot/common/printable.hpp"
#include "pqot/common/share_budget.hpp"

namespace pqot::common {
namespace {

using Verdict = HandshakeSlots::Verdict;

TEST(HandshakeSlots, BoundsPerSourceAndInTotal) {
  auto slots = std::make_shared<HandshakeSlots>(4, 2);
  std::vector<HandshakeSlots::Ticket> held;
  auto take = [&](const std::string& src) {
    auto [v, t] = slots->admit(src, [] {});
    if (t) held.push_back(std::move(t));
    return v;
  };
  EXPECT_EQ(take("a"), Verdict::admitted);
  EXPECT_EQ(take("a"), Verdict::admitted);
  EXPECT_EQ(take("a"), Verdict::source_full);
  EXPECT_EQ(take("b"), Verdict::admitted);
  EXPECT_EQ(take("b"), Verdict::admitted);
  EXPECT_EQ(slots->in_progress(), 4u);
  // Full: a newcomer from a source with none takes the place of a busier source's oldest.
  EXPECT_EQ(take("a"), Verdict::source_full);
  EXPECT_EQ(take("c"), Verdict::admitted_by_eviction) << "a holds 2, c none";
  EXPECT_EQ(slots->in_progress(), 4u);
  EXPECT_EQ(take("d"), Verdict::admitted_by_eviction) << "b holds 2, d none";
  EXPECT_EQ(slots->in_progress("a"), 1u);
  EXPECT_EQ(slots->in_progress("b"), 1u);
  // Now everyone holds 1: no source holds two more than a newcomer would, so it is refused.
  EXPECT_EQ(take("e"), Verdict::total_full);
  EXPECT_EQ(take("c"), Verdict::total_full) << "c would hold 2 against 1 each";
  held.clear();
  EXPECT_EQ(slots->in_progress(), 0u) << "every ticket released, evicted ones harmlessly";
  EXPECT_EQ(take("e"), Verdict::admitted);
}

TEST(HandshakeSlots, TheBusiestSourceGivesWayToAQuietOne) {
  auto slots = std::make_shared<HandshakeSlots>(3, 3);
  std::vector<int> evicted;
  std::vector<HandshakeSlots::Ticket> held;
  for (int i = 0; i < 3; ++i) {
    auto [v, t] = slots->admit("attacker", [&evicted, i] { evicted.push_back(i); });
    ASSERT_EQ(v, Verdict::admitted);
    held.push_back(std::move(t));
  }
  auto [v, t] = slots->admit("client", [] {});
  EXPECT_EQ(v, Verdict::admitted_by_eviction);
  EXPECT_EQ(evicted, std::vector<int>{0}) << "the attacker's oldest handshake";
  EXPECT_EQ(slots->in_progress("attacker"), 2u);
  EXPECT_EQ(slots->in_progress("client"), 1u);
  held.clear();  // releasing an evicted ticket is harmless
  EXPECT_EQ(slots->in_progress(), 1u);
  t.release();
  EXPECT_EQ(slots->in_progress(), 0u);
}

// Many sources with one handshake each (no source busier than another): the oldest of all gives
// way, but only once it has run for min_age; a young handshake (a real one) is never pushed out.
TEST(HandshakeSlots, TheOldestGivesWayWhenNoSourceIsBusier) {
  using namespace std::chrono_literals;
  auto slots = std::make_shared<HandshakeSlots>(2, 1, 1s);
  const auto t0 = HandshakeSlots::Clock::now();
  bool a_evicted = false;
  auto [va, ta] = slots->admit("a", [&] { a_evicted = true; }, t0);
  auto [vb, tb] = slots->admit("b", [] {}, t0 + 100ms);
  EXPECT_EQ(slots->admit("c", [] {}, t0 + 500ms).first, Verdict::total_full) << "none old enough";
  EXPECT_FALSE(a_evicted);
  auto [vc, tc] = slots->admit("c", [] {}, t0 + 1500ms);
  EXPECT_EQ(vc, Verdict::admitted_by_eviction);
  EXPECT_TRUE(a_evicted) << "the oldest, a";
  EXPECT_EQ(slots->in_progress("b"), 1u);
  EXPECT_EQ(slots->in_progress("c"), 1u);
}

TEST(KeyedCounter, AtMostLimitPerKey) {
  KeyedCounter c;
  EXPECT_TRUE(c.try_acquire("x", 2));
  EXPECT_TRUE(c.try_acquire("x", 2));
  EXPECT_FALSE(c.try_acquire("x", 2));
  EXPECT_TRUE(c.try_acquire("y", 2));
  c.release("x");
  EXPECT_EQ(c.count("x"), 1u);
  EXPECT_TRUE(c.try_acquire("x", 2));
  c.release("nobody");  // harmless
}

TEST(LogLimiter, BurstPerIntervalThenSaysHowManyWereLeftOut) {
  LogLimiter l(3, std::chrono::seconds(10));
  const auto t0 = LogLimiter::Clock::now();
  int written = 0;
  for (int i = 0; i < 100; ++i) written += l.allow(t0).log ? 1 : 0;
  EXPECT_EQ(written, 3);
  const auto next = l.allow(t0 + std::chrono::seconds(11));
  EXPECT_TRUE(next.log);
  EXPECT_EQ(next.suppressed, 97u);
  EXPECT_EQ(l.allow(t0 + std::chrono::seconds(11)).suppressed, 0u);
}

TEST(Printable, EscapesEverythingButPrintableAscii) {
  EXPECT_EQ(printable("node.1"), "node.1");
  EXPECT_EQ(printable(std::string("a\xff\n\"b\\", 6)), "a\\xff\\x0a\"b\\\\");
  EXPECT_EQ(printable(std::string(1000, 'x'), 10), std::string(10, 'x') + "...");
}

TEST(Printable, TerminalTextKeepsUtf8AndEscapesWhatATerminalObeys) {
  EXPECT_EQ(terminal_text("230 V, Zähler, 電力 \xf0\x9f\x94\x8c"), "230 V, Zähler, 電力 \xf0\x9f\x94\x8c");
  EXPECT_EQ(terminal_text(std::string("\x1b[31m\x00\x7f\t\\", 9)), "\\x1b[31m\\x00\\x7f\\x09\\\\");
  // C1 controls and bidirectional formatting characters (UTF-8 encoded).
  EXPECT_EQ(terminal_text("\xc2\x9b" "1m \xc2\x85 \xe2\x80\xae \xe2\x81\xa6 \xd8\x9c \xe2\x80\x8f"),
            "\\u009b1m \\u0085 \\u202e \\u2066 \\u061c \\u200f");
  // Not UTF-8: each byte that is no part of a valid sequence as \xNN (overlong, surrogate, cut).
  EXPECT_EQ(terminal_text("\xff\x80\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82"),
            "\\xff\\x80\\xc0\\xaf\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80\\xe2\\x82");
}

// ShareBudget: items and bytes per key and in all, the first bound crossed named, nothing taken
// when refused, peaks, and two threads at once.
using ShareVerdict = ShareBudget::Verdict;

TEST(ShareBudget, OneKeyTakesAtMostItsShareOfItemsAndBytes) {
  ShareBudget b({/*total_items=*/10, /*total_bytes=*/1000, /*per_key_items=*/3, /*per_key_bytes=*/250});
  EXPECT_EQ(b.admit(7, 100), ShareVerdict::admitted);
  EXPECT_EQ(b.admit(7, 100), ShareVerdict::admitted);
  EXPECT_EQ(b.admit(7, 51), ShareVerdict::key_bytes);  // 251 > 250
  EXPECT_EQ(b.admit(7, 50), ShareVerdict::admitted);   // exactly 250
  EXPECT_EQ(b.admit(7, 0), ShareVerdict::key_items);   // a fourth item
  EXPECT_EQ(b.of(7).items, 3u);
  EXPECT_EQ(b.of(7).bytes, 250u);
  // Another key is not affected by the first one's flood.
  EXPECT_EQ(b.admit(8, 250), ShareVerdict::admitted);
  EXPECT_EQ(b.total().items, 4u);
  EXPECT_EQ(b.total().bytes, 500u);
  EXPECT_EQ(b.keys(), 2u);
  // Giving back makes room again, for that key.
  b.release(7, 100);
  EXPECT_EQ(b.admit(7, 100), ShareVerdict::admitted);
  EXPECT_EQ(b.admit(7, 1), ShareVerdict::key_items);
}

TEST(ShareBudget, TheTotalBoundsAllKeysTogether) {
  ShareBudget b({/*total_items=*/4, /*total_bytes=*/300, /*per_key_items=*/3, /*per_key_bytes=*/200});
  EXPECT_EQ(b.admit(1, 150), ShareVerdict::admitted);
  EXPECT_EQ(b.admit(2, 150), ShareVerdict::admitted);
  EXPECT_EQ(b.admit(3, 1), ShareVerdict::total_bytes);
  EXPECT_EQ(b.of(3).items, 0u);  // refused: nothing taken
  EXPECT_EQ(b.keys(), 2u);       // and no entry left for it
  b.release(1, 150);
  EXPECT_EQ(b.admit(3, 0), ShareVerdict::admitted);
  EXPECT_EQ(b.admit(3, 0), ShareVerdict::admitted);
  EXPECT_EQ(b.admit(4, 0), ShareVerdict::admitted);
  EXPECT_EQ(b.admit(5, 0), ShareVerdict::total_items);
}

TEST(ShareBudget, AnItemLargerThanAShareIsRefusedWithoutOverflow) {
  ShareBudget b({10, 1000, 5, 100});
  EXPECT_EQ(b.admit(1, 101), ShareVerdict::key_bytes);
  EXPECT_EQ(b.admit(1, SIZE_MAX), ShareVerdict::key_bytes);
  ShareBudget wide({10, 100, 5, SIZE_MAX});
  EXPECT_EQ(wide.admit(1, 60), ShareVerdict::admitted);
  EXPECT_EQ(wide.admit(2, SIZE_MAX - 10), ShareVerdict::total_bytes);
  EXPECT_EQ(wide.total().bytes, 60u);
}

TEST(ShareBudget, PeaksRememberTheMostHeldInAllAndByOneKey) {
  ShareBudget b({10, 1000, 5, 500});
  b.admit(1, 300);
  b.admit(1, 100);
  b.admit(2, 50);
  b.release(1, 300);
  b.release(1, 100);
  b.admit(2, 50);
  EXPECT_EQ(b.total().items, 2u);
  EXPECT_EQ(b.peak().items, 3u);
  EXPECT_EQ(b.peak().bytes, 450u);
  EXPECT_EQ(b.peak_per_key().items, 2u);
  EXPECT_EQ(b.peak_per_key().bytes, 400u);
}

TEST(ShareBudget, ReleasingWhatWasNeverAdmittedChangesNothing) {
  ShareBudget b({10, 1000, 5, 500});
  b.release(9, 10);
  EXPECT_EQ(b.admit(1, 10), ShareVerdict::admitted);
  b.release(1, 999);  // more bytes than it holds: clamped, never wraps
  EXPECT_EQ(b.total().items, 0u);
  EXPECT_EQ(b.total().bytes, 0u);
  EXPECT_EQ(b.keys(), 0u);
}

TEST(ShareBudget, AdmitOnOneThreadAndReleaseOnAnotherBalance) {
  ShareBudget b({1'000'000, SIZE_MAX, 1'000'000, SIZE_MAX});
  constexpr int kItems = 20'000;
  std::thread producer([&] {
    for (int i = 0; i < kItems; ++i) ASSERT_EQ(b.admit(static_cast<std::uint64_t>(i % 3), 7), ShareVerdict::admitted);
  });
  producer.join();
  std::thread consumer([&] {
    for (int i = 0; i < kItems; ++i) b.release(static_cast<std::uint64_t>(i % 3), 7);
  });
  for (int i = 0; i < kItems; ++i) {
    if (b.admit(5, 1) == ShareVerdict::admitted) b.release(5, 1);
  }
  consumer.join();
  EXPECT_EQ(b.total().items, 0u);
  EXPECT_EQ(b.total().bytes, 0u);
  EXPECT_EQ(b.keys(), 0u);
}

}  // namespace
}  // namespace pqot::common

#include "pqot/common/host_port.hpp"

namespace pqot::common {
namespace {

TEST(HostPort, OneStrictParser) {
  auto hp = parse_host_port("127.0.0.1:4843");
  ASSERT_TRUE(hp);
  EXPECT_EQ(hp->host, "127.0.0.1");
  EXPECT_EQ(hp->port, 4843);
  hp = parse_host_port("[::1]:9");
  ASSERT_TRUE(hp);
  EXPECT_EQ(hp->host, "::1");
  EXPECT_EQ(hp->port, 9);
  EXPECT_EQ(parse_host_port("plant-gw:65535")->port, 65535);
  for (const char* bad : {"h:12x", "h:", ":80", "h", "h:65536", "h:-1", "h: 80", "::1:80", "[::1]80", "[::1]:", "h:+80",
                          "h:123456", "h:0"}) {
    EXPECT_FALSE(parse_host_port(bad)) << bad;
  }
  EXPECT_EQ(parse_host_port("127.0.0.1:0", true)->port, 0) << "any free port, where allowed";
}

}  // namespace
}  // namespace pqot::common
