// SRMCP v2 session cryptography: key schedule (§5), nonces and key update (§6), link binding (§7),
// sealed frames (§3) and messages (§9), reassembly (§8.2). The replay window (§10) is the channel
// layer's (channel_replay_window_test.cpp).
#include <gtest/gtest.h>

#include <random>

#include "pqot/crypto/aead.hpp"
#include "pqot/srmcp/reassembly.hpp"
#include "pqot/srmcp/session_crypto.hpp"

namespace pqot::srmcp {
namespace {

SessionKeys keys(std::uint8_t exporter_fill = 1) {
  const Bytes exporter(32, exporter_fill), kem(32, 2), th(32, 3);
  return derive_session_keys(exporter, kem, th);
}

bool same(const Key& a, const Key& b) { return crypto::ct_equal(a.span(), b.span()); }

TEST(SrmcpCrypto, KeyScheduleSeparatesDirectionsAndPurposes_S5) {
  const SessionKeys k = keys();
  const Key* all[] = {&k.c2s.frame, &k.c2s.message, &k.s2c.frame, &k.s2c.message, &k.link};
  for (std::size_t i = 0; i < 5; ++i) {
    for (std::size_t j = i + 1; j < 5; ++j) EXPECT_FALSE(same(*all[i], *all[j])) << i << "," << j;
  }
  // Bound to the TLS exporter: another TLS session gives other keys even with the same KEM secret.
  EXPECT_FALSE(same(keys(9).c2s.message, k.c2s.message));
  // Deterministic.
  EXPECT_TRUE(same(keys().s2c.frame, k.s2c.frame));
}

TEST(SrmcpCrypto, NoncePrefixesAreDistinct_S6) {
  EXPECT_NE(frame_prefix(Direction::client_to_server, 5), frame_prefix(Direction::server_to_client, 5));
  EXPECT_NE(frame_prefix(Direction::client_to_server, 5), frame_prefix(Direction::client_to_server, 6));
  EXPECT_NE(message_prefix(Direction::client_to_server), message_prefix(Direction::server_to_client));
}

TEST(SrmcpCrypto, SealedFrameRoundTripAndTamperCloses_S3) {
  const SessionKeys k = keys();
  SendState sender(k.c2s, Direction::client_to_server, 1000, std::chrono::hours(1));
  ReceiveState receiver(k.c2s, Direction::client_to_server);
  const Bytes payload(100, 0x5a);
  const Bytes frame = sender.seal_frame(FrameType::sealed, 3, 0, payload);
  ASSERT_EQ(frame.size(), 8 + 32 + 100 + 16);
  const auto header = parse_frame_header(std::span<const std::uint8_t, 32>(frame.data() + 8, 32));
  const ByteView aad(frame.data(), 40), body(frame.data() + 40, frame.size() - 40);
  EXPECT_EQ(receiver.open_frame(header, aad, body), payload);

  for (std::size_t at : {std::size_t{3}, std::size_t{20}, std::size_t{50}, frame.size() - 1}) {
    Bytes bad = frame;
    bad[at] ^= 1;
    FrameHeader h = header;
    EXPECT_THROW(receiver.open_frame(h, ByteView(bad.data(), 40), ByteView(bad.data() + 40, bad.size() - 40)),
                 ProtocolError)
        << at;
  }
  // The other direction's keys cannot open it.
  ReceiveState wrong(k.s2c, Direction::client_to_server);
  EXPECT_THROW(wrong.open_frame(header, aad, body), ProtocolError);
}

TEST(SrmcpCrypto, MessagesAreSequencedAndReplaysRefused_S9_S10) {
  const SessionKeys k = keys();
  SendState sender(k.s2c, Direction::server_to_client, 1000, std::chrono::hours(1));
  ReceiveState receiver(k.s2c, Direction::server_to_client);
  MessageHeader h{MessageType::read, true, Status::ok, 12};
  const Bytes m0 = sender.seal_message(h, crypto::as_bytes("{\"values\":[]}"));
  EXPECT_EQ(h.msg_seq, 0u);
  MessageHeader h1{MessageType::ping, true, Status::ok, 13};
  const Bytes m1 = sender.seal_message(h1, crypto::as_bytes("{}"));
  EXPECT_EQ(h1.msg_seq, 1u);

  // Out of order is fine (messages cross several links); a second copy is a replay.
  EXPECT_EQ(receiver.open_message(m1).first.tid, 13u);
  const auto [header, body] = receiver.open_message(m0);
  EXPECT_EQ(header.tid, 12u);
  EXPECT_EQ(std::string(body.begin(), body.end()), "{\"values\":[]}");
  try {
    receiver.open_message(m0);
    ADD_FAILURE() << "replay accepted";
  } catch (const ProtocolError& e) {
    EXPECT_EQ(e.action(), Action::reply);
    EXPECT_EQ(e.status(), Status::replay);
    EXPECT_EQ(e.tid(), 12u);
  }
  // A modified header (here: the tid) fails authentication.
  Bytes forged = m1;
  forged[7] ^= 1;
  EXPECT_THROW(receiver.open_message(forged), ProtocolError);
}

TEST(SrmcpCrypto, KeyUpdateAfterBoundedMessages_S6) {
  const SessionKeys k = keys();
  SendState sender(k.c2s, Direction::client_to_server, 3, std::chrono::hours(1));
  ReceiveState receiver(k.c2s, Direction::client_to_server);
  std::vector<Bytes> sealed;
  for (int i = 0; i < 10; ++i) {
    MessageHeader h{MessageType::ping, false, Status::ok, static_cast<std::uint32_t>(i + 1)};
    sealed.push_back(sender.seal_message(h, crypto::as_bytes("{}")));
    EXPECT_EQ(h.epoch, static_cast<std::uint32_t>(i / 3));
  }
  // Received in order, every epoch step is followed.
  for (const auto& m : sealed) EXPECT_NO_THROW(receiver.open_message(m));
  // The frame keys follow the same epoch.
  const Bytes f = sender.seal_frame(FrameType::sealed, 0, 0, crypto::as_bytes("x"));
  const auto fh = parse_frame_header(std::span<const std::uint8_t, 32>(f.data() + 8, 32));
  EXPECT_EQ(fh.epoch, sender.epoch());
  EXPECT_EQ(receiver.open_frame(fh, ByteView(f.data(), 40), ByteView(f.data() + 40, f.size() - 40)),
            Bytes{'x'});
}

TEST(SrmcpCrypto, EpochJumpIsRefused_S6) {
  const SessionKeys k = keys();
  SendState sender(k.c2s, Direction::client_to_server, 1, std::chrono::hours(1));
  ReceiveState receiver(k.c2s, Direction::client_to_server);
  std::vector<Bytes> sealed;
  for (int i = 0; i < 3; ++i) {
    MessageHeader h{MessageType::ping, false, Status::ok, 1};
    sealed.push_back(sender.seal_message(h, crypto::as_bytes("{}")));
  }
  // Epochs 0, 1, 2; skipping straight to 2 is more than one step.
  EXPECT_NO_THROW(receiver.open_message(sealed[0]));
  EXPECT_THROW(receiver.open_message(sealed[2]), ProtocolError);
}

TEST(SrmcpCrypto, LinkBindProofBindsTokenLinkAndTlsSession_S7) {
  const SessionKeys k = keys();
  const Bytes token(32, 4), exporter(32, 5), other_exporter(32, 6);
  const auto p = link_bind_proof(k.link, token, 1, exporter);
  EXPECT_EQ(p, link_bind_proof(k.link, token, 1, exporter));
  EXPECT_NE(p, link_bind_proof(k.link, token, 2, exporter));
  EXPECT_NE(p, link_bind_proof(k.link, token, 1, other_exporter));
  EXPECT_NE(p, link_bind_proof(keys(9).link, token, 1, exporter));
}

Segment make_segment(const Bytes& message, std::uint64_t msg_seq, std::uint16_t count, std::uint16_t index,
                     std::vector<Bytes>& storage) {
  SegmentHeader h{1, msg_seq, index, count, static_cast<std::uint32_t>(message.size()), 0};
  auto [offset, size] = segment_span(h.total, count, index);
  h.offset = offset;
  storage.emplace_back();
  encode_segment_header(h, storage.back());
  storage.back().insert(storage.back().end(), message.begin() + offset, message.begin() + offset + size);
  return parse_segment(storage.back(), Limits{});
}

TEST(SrmcpReassembly, AnyOrderDuplicatesDroppedBounded_S8_2) {
  Limits limits;
  limits.max_reassemblies = 2;
  Reassembler r(limits);
  Bytes message(1000);
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<std::uint8_t>(i * 7);
  std::vector<Bytes> storage;
  storage.reserve(64);
  EXPECT_FALSE(r.add(make_segment(message, 1, 3, 2, storage)));
  EXPECT_THROW(r.add(make_segment(message, 1, 3, 2, storage)), ProtocolError) << "duplicate";
  EXPECT_FALSE(r.add(make_segment(message, 1, 3, 0, storage)));
  const auto whole = r.add(make_segment(message, 1, 3, 1, storage));
  ASSERT_TRUE(whole);
  EXPECT_EQ(*whole, message);
  EXPECT_EQ(r.pending(), 0u);

  // Bounded: a third partial message is refused; expiry frees the slots.
  EXPECT_FALSE(r.add(make_segment(message, 10, 2, 0, storage)));
  EXPECT_FALSE(r.add(make_segment(message, 11, 2, 0, storage)));
  EXPECT_THROW(r.add(make_segment(message, 12, 2, 0, storage)), ProtocolError);
  EXPECT_EQ(r.expire(Reassembler::Clock::now() + std::chrono::seconds(1)), 2u);
  EXPECT_FALSE(r.add(make_segment(message, 12, 2, 0, storage)));
  // A segment disagreeing with its message's total is dropped.
  Bytes other(999, 1);
  EXPECT_THROW(r.add(make_segment(other, 12, 2, 1, storage)), ProtocolError);
}

// §8.2: a first segment announcing a 1 MiB message holds only its own bytes; partial bytes are
// bounded per session and by the server-wide budget, and given back on completion and expiry.
TEST(SrmcpReassembly, MemoryFollowsArrivalsWithinBudgets_S8_2) {
  Limits limits;
  Bytes big(1u << 20, 0x5a);
  std::vector<Bytes> storage;
  storage.reserve(64);
  auto budget = std::make_shared<ReassemblyBudget>(200'000);
  {
    Reassembler r(limits, 100'000, budget);
    EXPECT_FALSE(r.add(make_segment(big, 1, 16, 3, storage)));  // 64 KiB of 1 MiB
    EXPECT_EQ(r.bytes(), (1u << 20) / 16);
    EXPECT_EQ(budget->used(), r.bytes());
    EXPECT_THROW(r.add(make_segment(big, 2, 16, 3, storage)), ProtocolError) << "over the session's bound";
    Reassembler other(limits, 0, budget);
    EXPECT_FALSE(other.add(make_segment(big, 1, 16, 0, storage)));
    EXPECT_FALSE(other.add(make_segment(big, 1, 16, 1, storage)));
    EXPECT_THROW(other.add(make_segment(big, 1, 16, 2, storage)), ProtocolError) << "over the shared budget";
    EXPECT_EQ(r.expire(Reassembler::Clock::now() + std::chrono::seconds(1)), 1u);
    EXPECT_EQ(r.bytes(), 0u);
    EXPECT_TRUE(r.oldest() == std::nullopt);
  }
  EXPECT_EQ(budget->used(), 0u) << "destroyed reassemblers give their bytes back";
}

}  // namespace
}  // namespace pqot::srmcp

namespace pqot::srmcp {
namespace {

Bytes sealed_frame_body(SendState& sender, std::uint64_t seq, FrameHeader& header_out, Bytes& aad_out) {
  const Bytes f = sender.seal_frame(FrameType::sealed, 0, seq, crypto::as_bytes("x"));
  header_out = parse_frame_header(std::span<const std::uint8_t, 32>(f.data() + 8, 32));
  aad_out.assign(f.begin(), f.begin() + 40);
  return Bytes(f.begin() + 40, f.end());
}

// §6: a frame claiming the next epochs moves the receiver only if it authenticates.
TEST(SrmcpCrypto, ForgedEpochsDoNotMoveTheReceiver_S6) {
  const SessionKeys k = keys();
  SendState sender(k.c2s, Direction::client_to_server, 1u << 20, std::chrono::hours(1));
  ReceiveState receiver(k.c2s, Direction::client_to_server);
  for (std::uint32_t epoch : {1u, 2u, 3u, 4u, 5u}) {
    FrameHeader h{FrameType::sealed, 0, epoch, epoch};
    Bytes forged = seal_frame(*std::make_unique<crypto::Aes256Gcm>(keys(9).c2s.frame.span()),
                              Direction::client_to_server, h, crypto::as_bytes("evil"));
    EXPECT_THROW(receiver.open_frame(h, ByteView(forged.data(), 40), ByteView(forged.data() + 40, forged.size() - 40)),
                 ProtocolError);
  }
  FrameHeader h;
  Bytes aad;
  const Bytes body = sealed_frame_body(sender, 0, h, aad);
  EXPECT_EQ(h.epoch, 0u);
  EXPECT_EQ(receiver.open_frame(h, aad, body), Bytes{'x'}) << "still at epoch 0";
}

// §6: messages of a link that lags up to three epochs behind are still accepted; older ones not.
TEST(SrmcpCrypto, LaggingLinkWithinTheKeptEpochs_S6) {
  const SessionKeys k = keys();
  SendState sender(k.c2s, Direction::client_to_server, 2, std::chrono::hours(1));  // two messages per epoch
  ReceiveState receiver(k.c2s, Direction::client_to_server);
  std::vector<Bytes> sealed;  // sealed[i] is of epoch i / 2
  for (int i = 0; i < 10; ++i) {
    MessageHeader h{MessageType::ping, false, Status::ok, static_cast<std::uint32_t>(i + 1)};
    sealed.push_back(sender.seal_message(h, crypto::as_bytes("{}")));
  }
  // m1 (epoch 0) and m3 (epoch 1) are held back on a slow link; the rest arrive in order.
  for (int i : {0, 2, 4, 5, 6, 7, 8}) ASSERT_NO_THROW(receiver.open_message(sealed[i])) << i;
  // Now at epoch 4, with epochs 3, 2 and 1 kept.
  EXPECT_NO_THROW(receiver.open_message(sealed[3])) << "epoch 1, three behind: accepted";
  EXPECT_THROW(receiver.open_message(sealed[1]), ProtocolError) << "epoch 0, four behind: its keys are gone";
  EXPECT_NO_THROW(receiver.open_message(sealed[9]));
}

}  // namespace
}  // namespace pqot::srmcp
