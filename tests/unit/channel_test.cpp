// The channel layer (docs/channel.md): labelled key schedule, epochs, nonce prefixes, reassembly
// of fragments, multipath choice. SRMCP's own checks of the same code through its spec are in
// srmcp_crypto_test.cpp and srmcp_kat_test.cpp.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "pqot/channel/epochs.hpp"
#include "pqot/channel/key_schedule.hpp"
#include "pqot/channel/multipath.hpp"
#include "pqot/channel/nonce.hpp"
#include "pqot/channel/reassembly.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/hkdf.hpp"

namespace pqot::channel {
namespace {

bool same(const Key& a, const Key& b) {
  return crypto::ct_equal(a.span(), b.span());
}

// The prefix is part of every label: two protocols with the same secrets get unrelated keys, and
// the derivation is exactly HKDF-Expand(prk, "prefix label" || context) as documented.
TEST(ChannelKeySchedule, LabelsCarryTheProtocolPrefix) {
  const KeySchedule a("srmcp2"), b("srup2");
  const Key prk = KeySchedule::extract(crypto::as_bytes("salt"), crypto::as_bytes("ikm"));
  const crypto::Bytes context(32, 3);
  EXPECT_FALSE(same(a.expand(prk, "link", context), b.expand(prk, "link", context)));
  EXPECT_FALSE(same(a.next_epoch(prk), b.next_epoch(prk)));
  EXPECT_NE(a.mac(prk, "bind", {context}), b.mac(prk, "bind", {context}));

  crypto::Bytes info = {'s', 'r', 'm', 'c', 'p', '2', ' ', 'l', 'i', 'n', 'k'};
  info.insert(info.end(), context.begin(), context.end());
  const auto expected = crypto::hkdf_sha256_expand(prk.span(), info, 32);
  EXPECT_TRUE(crypto::ct_equal(a.expand(prk, "link", context).span(), expected));
  EXPECT_EQ(KeySchedule::extract(crypto::as_bytes("salt"), crypto::as_bytes("ikm")).span().size(),
            32u);
  const auto update =
      crypto::hkdf_sha256_expand(prk.span(), crypto::as_bytes("srmcp2 key update"), 32);
  EXPECT_TRUE(crypto::ct_equal(a.next_epoch(prk).span(), update));
  EXPECT_EQ(a.mac(prk, "bind", {context, context}),
            crypto::hmac_sha256(prk.span(), {crypto::as_bytes("srmcp2 bind"), context, context}));
  EXPECT_THROW(KeySchedule(""), std::invalid_argument);
  EXPECT_THROW(KeySchedule("a b"), std::invalid_argument) << "'a' + 'b c' would equal 'a b' + 'c'";
  EXPECT_THROW(KeySchedule("SRMCP"), std::invalid_argument);
}

TEST(ChannelKeySchedule, TranscriptHashIsSha256OfTheConcatenation) {
  const crypto::Bytes ch = {1, 2, 3}, sh = {4, 5};
  const crypto::Bytes both = {1, 2, 3, 4, 5};
  EXPECT_EQ(transcript_hash({ch, sh}), crypto::sha256(both));
}

TEST(ChannelNonce, PrefixesAreDistinctPerDirectionAndPath) {
  EXPECT_EQ(path_prefix(Direction::client_to_server, 5), (crypto::NoncePrefix{0, 0, 0, 5}));
  EXPECT_EQ(path_prefix(Direction::server_to_client, 5), (crypto::NoncePrefix{0x80, 0, 0, 5}));
  EXPECT_EQ(path_prefix(Direction::server_to_client, 0x80000001u),
            (crypto::NoncePrefix{0x80, 0, 0, 1}))
      << "bit 31 of the id is the direction's";
  EXPECT_EQ(tagged_prefix('M', Direction::server_to_client), (crypto::NoncePrefix{'M', 0, 0, 1}));
  EXPECT_EQ(reverse(Direction::client_to_server), Direction::server_to_client);
}

// The next epoch is adopted only on commit; previous epochs stay usable for the grace period and
// only `kept` of them.
TEST(ChannelEpochs, NextEpochOnlyOnCommitPreviousForAGracePeriod) {
  using Window = EpochWindow<int>;
  const auto t0 = Window::Clock::now();
  Window w(100, 2, std::chrono::seconds(10));
  const auto next = [](int s) { return s + 1; };
  std::optional<Window::Epoch> candidate;
  ASSERT_NE(w.find(0, candidate, next, t0), nullptr);
  EXPECT_EQ(w.find(2, candidate, next, t0), nullptr) << "two ahead";
  Window::Epoch* e1 = w.find(1, candidate, next, t0);
  ASSERT_NE(e1, nullptr);
  EXPECT_EQ(e1->state, 101);
  EXPECT_EQ(w.current(), 0u) << "not adopted until it authenticates";
  candidate.reset();  // a forgery: nothing committed
  EXPECT_EQ(w.current(), 0u);
  for (std::uint32_t n = 1; n <= 3; ++n) {
    ASSERT_NE(w.find(n, candidate, next, t0), nullptr);
    w.commit(candidate, t0);
  }
  EXPECT_EQ(w.current(), 3u);
  EXPECT_EQ(w.kept(), 2u);
  ASSERT_NE(w.find(2, candidate, next, t0), nullptr);
  EXPECT_EQ(w.find(2, candidate, next, t0)->state, 102);
  EXPECT_EQ(w.find(0, candidate, next, t0), nullptr) << "only two kept";
  EXPECT_EQ(w.find(2, candidate, next, t0 + std::chrono::seconds(11)), nullptr)
      << "after the grace period";
}

Fragment fragment(const crypto::Bytes& msg, std::uint64_t id, std::uint16_t count,
                  std::uint16_t index) {
  const std::size_t part = (msg.size() + count - 1) / count;
  const std::size_t off = std::min(msg.size(), part * index);
  const std::size_t len = std::min(part, msg.size() - off);
  return Fragment{
      id, 9, index, count, static_cast<std::uint32_t>(msg.size()), ByteView(msg).subspan(off, len)};
}

TEST(ChannelReassembly, AnyOrderAndEveryRefusalNamed) {
  crypto::Bytes msg(300);
  for (std::size_t i = 0; i < msg.size(); ++i) msg[i] = static_cast<std::uint8_t>(i);
  auto budget = std::make_shared<ReassemblyBudget>(1000);
  Reassembler r(2, 500, budget);
  const auto kind_of = [&](const Fragment& f) {
    try {
      r.add(f);
    } catch (const ReassemblyError& e) {
      return static_cast<int>(e.kind());
    }
    return -1;
  };
  EXPECT_FALSE(r.add(fragment(msg, 1, 3, 2)));
  EXPECT_EQ(kind_of(fragment(msg, 1, 3, 2)), static_cast<int>(ReassemblyError::Kind::duplicate));
  Fragment other_tag = fragment(msg, 1, 3, 0);
  other_tag.tag = 10;
  EXPECT_EQ(kind_of(other_tag), static_cast<int>(ReassemblyError::Kind::inconsistent));
  Fragment bad_index = fragment(msg, 1, 3, 0);
  bad_index.index = 3;
  EXPECT_EQ(kind_of(bad_index), static_cast<int>(ReassemblyError::Kind::inconsistent));
  EXPECT_FALSE(r.add(fragment(msg, 1, 3, 0)));
  EXPECT_EQ(*r.add(fragment(msg, 1, 3, 1)), msg);
  EXPECT_EQ(r.bytes(), 0u);
  EXPECT_EQ(budget->used(), 0u);

  EXPECT_FALSE(r.add(fragment(msg, 2, 2, 0)));
  EXPECT_FALSE(r.add(fragment(msg, 3, 2, 0)));
  EXPECT_EQ(kind_of(fragment(msg, 4, 2, 0)),
            static_cast<int>(ReassemblyError::Kind::too_many_messages));
  EXPECT_EQ(r.expire(Reassembler::Clock::now() + std::chrono::seconds(1)), 2u);
  // Parts that do not add up to the announced total are refused when the last one arrives.
  const crypto::Bytes small(10, 1);
  Fragment liar0{7, 0, 0, 2, 300, ByteView(small)}, liar1{7, 0, 1, 2, 300, ByteView(small)};
  EXPECT_FALSE(r.add(liar0));
  EXPECT_EQ(kind_of(liar1), static_cast<int>(ReassemblyError::Kind::inconsistent));
  EXPECT_EQ(r.pending(), 0u);
  EXPECT_EQ(r.bytes(), 0u);
  // The reassembler's own byte bound, then the shared budget.
  const crypto::Bytes big(800, 2);
  EXPECT_FALSE(r.add(fragment(big, 8, 2, 0)));
  const std::size_t held = r.bytes(), used = budget->used();
  EXPECT_EQ(kind_of(fragment(big, 9, 2, 0)), static_cast<int>(ReassemblyError::Kind::over_limit));
  EXPECT_EQ(r.bytes(), held) << "a refused fragment leaves nothing behind";
  EXPECT_EQ(budget->used(), used);
  Fragment empty = fragment(msg, 20, 2, 0);
  empty.data = {};
  EXPECT_EQ(kind_of(empty), static_cast<int>(ReassemblyError::Kind::inconsistent))
      << "an empty part";
  Fragment too_much = fragment(msg, 21, 2, 0);
  too_much.total = 10;
  EXPECT_EQ(kind_of(too_much), static_cast<int>(ReassemblyError::Kind::inconsistent))
      << "more bytes than the total";
  Reassembler second(2, 1000, budget);
  const crypto::Bytes huge(2000, 3);
  EXPECT_EQ(
      [&] {
        try {
          second.add(fragment(huge, 1, 2, 0));
        } catch (const ReassemblyError& e) {
          return static_cast<int>(e.kind());
        }
        return -1;
      }(),
      static_cast<int>(ReassemblyError::Kind::over_budget));
  EXPECT_EQ(budget->used(), r.bytes()) << "the refused fragment took nothing from the budget";
  {
    Reassembler third(2, 1000, budget);
    EXPECT_FALSE(third.add(fragment(msg, 1, 3, 0)));
    EXPECT_EQ(budget->used(), r.bytes() + third.bytes());
  }
  EXPECT_EQ(budget->used(), r.bytes()) << "a destroyed reassembler gives its bytes back";
}

// A budget inside another (one peer's inside the server's) takes from both and gives back to both.
TEST(ChannelReassembly, AOneFragmentMessageIsWholeWithTheChecksOfAdd) {
  const crypto::Bytes msg{1, 2, 3, 4, 5};
  EXPECT_TRUE(Reassembler::is_whole(fragment(msg, 1, 1, 0)));
  EXPECT_FALSE(Reassembler::is_whole(fragment(msg, 1, 2, 0)));
  const auto kind = [](const Fragment& f) {
    try {
      (void)Reassembler::is_whole(f);
    } catch (const ReassemblyError& e) {
      return static_cast<int>(e.kind());
    }
    return -1;
  };
  const int inconsistent = static_cast<int>(ReassemblyError::Kind::inconsistent);
  Fragment short_one = fragment(msg, 1, 1, 0);
  short_one.total = 6;  // says 6 bytes, carries 5
  EXPECT_EQ(kind(short_one), inconsistent);
  Fragment no_count = fragment(msg, 1, 1, 0);
  no_count.count = 0;
  EXPECT_EQ(kind(no_count), inconsistent);
  Fragment empty_part = fragment(msg, 1, 2, 0);
  empty_part.data = {};
  EXPECT_EQ(kind(empty_part), inconsistent);
  // add() agrees: the same message comes back whole, the same refusals are refused.
  Reassembler r(2, 100);
  EXPECT_EQ(r.add(fragment(msg, 1, 1, 0)), msg);
  EXPECT_THROW(r.add(short_one), ReassemblyError);
  EXPECT_EQ(r.pending(), 0u);
}

TEST(ChannelReassembly, NestedBudgets) {
  auto server = std::make_shared<ReassemblyBudget>(100);
  auto peer = std::make_shared<ReassemblyBudget>(60, server);
  auto other = std::make_shared<ReassemblyBudget>(60, server);
  EXPECT_TRUE(peer->take(60));
  EXPECT_FALSE(peer->take(1)) << "over the peer's cap";
  EXPECT_TRUE(other->take(40));
  EXPECT_FALSE(other->take(1)) << "over the server's cap";
  EXPECT_EQ(other->used(), 40u) << "a refusal by the parent is undone in the child";
  peer->give_back(60);
  EXPECT_EQ(server->used(), 40u);
  EXPECT_TRUE(other->take(20));
}

TEST(ChannelMultipath, FragmentCountBetweenNeededAndPaths) {
  std::mt19937_64 rng(3);
  EXPECT_EQ(fragment_count(100, 1000, 1, 4, 16, rng), std::optional<std::uint32_t>(1u))
      << "one wanted";
  std::set<std::uint32_t> seen;
  for (int i = 0; i < 200; ++i) {
    const auto n = fragment_count(5000, 1000, 16, 8, 16, rng);
    ASSERT_TRUE(n);
    EXPECT_GE(*n, 5u);
    EXPECT_LE(*n, 8u);
    seen.insert(*n);
  }
  EXPECT_EQ(seen.size(), 4u) << "5..8 all drawn";
  EXPECT_EQ(fragment_count(5000, 1000, 1, 1, 16, rng), std::optional<std::uint32_t>(5u))
      << "size wins over paths";
  EXPECT_EQ(fragment_count(17000, 1000, 16, 8, 16, rng), std::nullopt) << "needs 17 > 16";
  const auto tiny = fragment_count(3, 1000, 16, 8, 16, rng);
  ASSERT_TRUE(tiny);
  EXPECT_LE(*tiny, 3u) << "never more fragments than bytes";
}

TEST(ChannelMultipath, PicksUsablePathsPreferringRoomyOnes) {
  std::mt19937_64 rng(5);
  std::vector<std::shared_ptr<int>> paths = {std::make_shared<int>(0), std::make_shared<int>(1),
                                             std::make_shared<int>(2)};
  const auto usable = [](const std::shared_ptr<int>& p) { return *p != 0; };
  const auto roomy = [](const std::shared_ptr<int>& p) { return *p != 1; };
  for (int i = 0; i < 50; ++i)
    EXPECT_EQ(*pick_path(paths, usable, roomy, rng), 2) << "the only usable roomy path";
  const auto none_roomy = [](const std::shared_ptr<int>&) { return false; };
  std::set<int> picked;
  for (int i = 0; i < 100; ++i) picked.insert(*pick_path(paths, usable, none_roomy, rng));
  EXPECT_EQ(picked, (std::set<int>{1, 2})) << "uniform among usable ones when none has room";
  EXPECT_EQ(pick_path(
                paths, [](const std::shared_ptr<int>&) { return false; }, roomy, rng),
            nullptr);
}

}  // namespace
}  // namespace pqot::channel
