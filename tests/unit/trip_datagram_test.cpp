// TRIP's datagram layer and key schedule (docs/trip.md §2, §5, §6, Appendix A). The known answers
// were computed with Node.js's crypto module (HKDF and AES-GCM written out from RFC 5869 and the
// document), not with this code.
#include <gtest/gtest.h>

#include <numeric>

#include "pqot/crypto/hash.hpp"
#include "pqot/trip/datagram.hpp"
#include "pqot/trip/session_keys.hpp"

namespace pqot::trip {
namespace {

crypto::Bytes trip_counting(std::uint8_t first, std::size_t n) {
  crypto::Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(first + i);
  return b;
}

channel::Digest trip_digest(std::uint8_t first) {
  channel::Digest d{};
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<std::uint8_t>(first + i);
  return d;
}

std::string trip_hex(crypto::ByteView b) { return crypto::to_hex(b); }

SessionKeys trip_vector_keys() { return derive_session_keys(trip_counting(0x00, 32), trip_counting(0x20, 32), trip_digest(0x40)); }

// Appendix A.1: exporter 00..1f, KEM shared secret 20..3f, TH 40..5f.
TEST(TripKeys, TheKeyScheduleGivesTheDocumentsValues) {
  const SessionKeys k = trip_vector_keys();
  EXPECT_EQ(trip_hex(k.c2s.span()), "ab43c05de0aaffe1f9101a0e59a6ba851bdadda4b8833bc10ebd29df2316daa2");
  EXPECT_EQ(trip_hex(k.s2c.span()), "5fa779fb00c54ae3e5d20fd0080f9c9d8aa7a50f61383d532b6fe935f36d32f9");
  EXPECT_EQ(trip_hex(k.ready), "4b6db1993ecd3c8df57fe1cd803d99a597609305d80fe0f2b5fd5107ae701fd8");
  const channel::KeySchedule schedule(kLabelPrefix);
  EXPECT_EQ(trip_hex(schedule.next_epoch(k.c2s).span()),
            "ab56e0bcfc5e737041c722e180abf8dd5f0395cb43352aea3a88ef97b3b855f2");
}

// Appendix A.2: a 162-byte datagram (bytes 00, 01, ..., a1) of flow 0x0102, label 9, session 7,
// epoch 0, under the c2s key of A.1.
TEST(TripDatagram, ADataDatagramIsTheDocumentsBytes) {
  const SessionKeys k = trip_vector_keys();
  crypto::Aes256Gcm aead(k.c2s.span());
  const Header h{DatagramType::data, 0, 7, 0x0102, 9};
  const crypto::Bytes payload = trip_counting(0, 162);
  const crypto::Bytes dg = seal_datagram(aead, h, payload);
  ASSERT_EQ(dg.size(), 190u);
  EXPECT_EQ(trip_hex(crypto::ByteView(dg).first(40)),
            "0007010200000000000000097c6cae83b25aa8d8227d6df23e9bed96b4b6c8e35abb39b74f1fb5ba");
  EXPECT_EQ(trip_hex(crypto::ByteView(dg).last(16)), "e2d7a82c64c2bebebb5900e39f2eceb3");
  EXPECT_EQ(trip_hex(crypto::sha256(dg)), "e170211ad62e9f05bb69a7cc7a9a1749b13115db79de4b6b27ed1872ecb824a9");

  const auto parsed = parse_header(dg);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, h);
  crypto::Bytes out(dg.size() - kOverhead);
  crypto::Aes256Gcm receiver(k.c2s.span());
  ASSERT_TRUE(open_datagram(receiver, *parsed, dg, out));
  EXPECT_EQ(out, payload);
}

// Appendix A.3: a keepalive (counter 1, echo 5, held 1,000 µs) under the s2c key, epoch 0.
TEST(TripDatagram, AKeepaliveIsTheDocumentsBytes) {
  const SessionKeys k = trip_vector_keys();
  crypto::Aes256Gcm aead(k.s2c.span());
  const Header h{DatagramType::keepalive, 0, 7, 0, 1};
  const auto body = encode_keepalive({5, 1000});
  const crypto::Bytes dg = seal_datagram(aead, h, body);
  EXPECT_EQ(trip_hex(dg), "400700000000000000000001003ffab14e153ccea8fe1ec00bc19e2b1d96cd43f8a590cafbd3d942");
  const auto parsed = parse_header(dg);
  ASSERT_TRUE(parsed);
  crypto::Bytes out(kKeepaliveBodySize);
  ASSERT_TRUE(open_datagram(aead, *parsed, dg, out));
  EXPECT_EQ(decode_keepalive(out), (KeepaliveBody{5, 1000}));
}

TEST(TripDatagram, TheOverheadIsTwentyEightBytes) {
  EXPECT_EQ(kOverhead, 28u);
  EXPECT_EQ(kKeepaliveSize, 40u);
  crypto::Aes256Gcm aead(trip_counting(1, 32));
  EXPECT_EQ(seal_datagram(aead, {DatagramType::data, 63, 255, 65535, UINT64_MAX}, crypto::Bytes(162)).size(), 190u);
  EXPECT_EQ(seal_datagram(aead, {DatagramType::data, 0, 0, 1, 0}, {}).size(), 28u);  // an empty datagram travels too
}

TEST(TripDatagram, MalformedDatagramsAreRefusedBeforeAnyKey) {
  crypto::Aes256Gcm aead(trip_counting(1, 32));
  const crypto::Bytes good = seal_datagram(aead, {DatagramType::data, 3, 1, 2, 3}, crypto::Bytes(10));
  EXPECT_TRUE(parse_header(good));
  EXPECT_FALSE(parse_header(crypto::ByteView(good).first(27)));  // shorter than header and tag
  EXPECT_FALSE(parse_header({}));
  for (const std::uint8_t type_bits : {0x80, 0xc0}) {  // types 2 and 3
    crypto::Bytes bad = good;
    bad[0] = static_cast<std::uint8_t>(type_bits | 3);
    EXPECT_FALSE(parse_header(bad)) << int{type_bits};
  }
  crypto::Bytes flow_zero = good;
  flow_zero[2] = flow_zero[3] = 0;
  EXPECT_FALSE(parse_header(flow_zero));  // data names a flow

  const crypto::Bytes ka = seal_datagram(aead, {DatagramType::keepalive, 0, 1, 0, 1}, crypto::Bytes(12));
  EXPECT_TRUE(parse_header(ka));
  crypto::Bytes longer = ka;
  longer.push_back(0);
  EXPECT_FALSE(parse_header(longer));  // a keepalive is exactly 40 bytes
  EXPECT_FALSE(parse_header(crypto::ByteView(ka).first(39)));
  crypto::Bytes ka_flow = ka;
  ka_flow[3] = 1;
  EXPECT_FALSE(parse_header(ka_flow));  // a keepalive names no flow

  // What parse_header refuses, write_header and seal_datagram refuse to make.
  std::array<std::uint8_t, kHeaderSize> out{};
  EXPECT_THROW(write_header({DatagramType::data, 64, 0, 1, 0}, out), std::invalid_argument);
  EXPECT_THROW(write_header({DatagramType::data, 0, 0, 0, 0}, out), std::invalid_argument);
  EXPECT_THROW(write_header({DatagramType::keepalive, 0, 0, 1, 0}, out), std::invalid_argument);
  EXPECT_THROW(seal_datagram(aead, {DatagramType::keepalive, 0, 0, 0, 0}, crypto::Bytes(11)), std::invalid_argument);
  EXPECT_THROW(seal_datagram(aead, {DatagramType::data, 0, 0, 1, 0}, crypto::Bytes(kMaxPayload + 1)), std::invalid_argument);
}

// Every bit of header, ciphertext and tag is covered: a change anywhere fails to open (or to
// parse), and the plaintext buffer is wiped.
TEST(TripDatagram, AnyChangedBitFailsToOpen) {
  crypto::Aes256Gcm aead(trip_counting(9, 32));
  const Header h{DatagramType::data, 5, 9, 77, 123456};
  const crypto::Bytes dg = seal_datagram(aead, h, trip_counting(0x30, 40));
  for (std::size_t i = 0; i < dg.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      crypto::Bytes bad = dg;
      bad[i] ^= static_cast<std::uint8_t>(1u << bit);
      const auto parsed = parse_header(bad);
      if (!parsed) continue;
      crypto::Bytes out(bad.size() - kOverhead, 0xee);
      EXPECT_FALSE(open_datagram(aead, *parsed, bad, out)) << "byte " << i << " bit " << bit;
      EXPECT_EQ(out, crypto::Bytes(out.size(), 0)) << "byte " << i;
    }
  }
  crypto::Aes256Gcm other(trip_counting(10, 32));
  crypto::Bytes out(40);
  EXPECT_FALSE(open_datagram(other, h, dg, out));  // sealed under a foreign key
}

// docs/trip.md §2: the nonce is (type, 0, flow, counter), so flows sharing a key never share a nonce.
TEST(TripDatagram, TheNonceNamesTypeFlowAndCounter) {
  const Header a{DatagramType::data, 0, 0, 0x0a0b, 0x0102030405060708};
  EXPECT_EQ(trip_hex(datagram_nonce(a)), "00000a0b0102030405060708");
  const Header b{DatagramType::keepalive, 0, 0, 0, 0x0102030405060708};
  EXPECT_EQ(trip_hex(datagram_nonce(b)), "010000000102030405060708");
  Header c = a;
  c.flow = 0x0a0c;
  EXPECT_NE(datagram_nonce(a), datagram_nonce(c));
}

TEST(TripKeys, SenderAndReceiverFollowEpochsAndAForgedEpochMovesNothing) {
  const SessionKeys k = trip_vector_keys();
  const auto t0 = Clock::now();
  SendKeys send(k.c2s, {3, std::chrono::seconds(3600)}, t0);
  ReceiveKeys receive(k.c2s);
  crypto::Bytes out(4);
  for (std::uint64_t label = 0; label < 200; ++label) {
    const auto use = send.next(t0);
    const Header h{DatagramType::data, use.epoch_low, 1, 1, label};
    const crypto::Bytes dg = seal_datagram(use.aead, h, trip_counting(static_cast<std::uint8_t>(label), 4));
    ASSERT_TRUE(receive.open(h, dg, out, t0)) << label;
    EXPECT_EQ(out, trip_counting(static_cast<std::uint8_t>(label), 4));
  }
  // 200 datagrams at 3 per epoch: epoch 66, past the header's 64 (the low bits wrap).
  EXPECT_EQ(send.epoch(), 66u);
  EXPECT_EQ(receive.epoch(), 66u);

  // A datagram naming the next epoch under a wrong key does not move the receiver.
  crypto::Aes256Gcm forged_key(trip_counting(0xaa, 32));
  const Header next{DatagramType::data, static_cast<std::uint8_t>(67 & 0x3f), 1, 1, 1000};
  const crypto::Bytes forged = seal_datagram(forged_key, next, crypto::Bytes(4));
  EXPECT_FALSE(receive.open(next, forged, out, t0));
  EXPECT_EQ(receive.epoch(), 66u);
  // Epochs out of reach are refused even under their genuine keys: two ahead (68), and older
  // than the three kept (62).
  const channel::KeySchedule schedule(kLabelPrefix);
  std::vector<channel::Key> keys{k.c2s};
  for (int e = 1; e <= 68; ++e) keys.push_back(schedule.next_epoch(keys.back()));
  const auto sealed_in = [&](int epoch, std::uint64_t label) {
    crypto::Aes256Gcm aead(keys[static_cast<std::size_t>(epoch)].span());
    const Header h{DatagramType::data, static_cast<std::uint8_t>(epoch & 0x3f), 1, 1, label};
    return std::make_pair(h, seal_datagram(aead, h, crypto::Bytes(4)));
  };
  const auto [ahead_h, ahead_dg] = sealed_in(68, 1001);
  EXPECT_FALSE(receive.open(ahead_h, ahead_dg, out, t0));
  const auto [old_h, old_dg] = sealed_in(62, 1002);
  EXPECT_FALSE(receive.open(old_h, old_dg, out, t0));
  const auto [kept_h, kept_dg] = sealed_in(63, 1003);  // the oldest kept
  EXPECT_TRUE(receive.open(kept_h, kept_dg, out, t0));
  const auto [next_h, next_dg] = sealed_in(67, 1004);  // the next one: adopted once it authenticates
  EXPECT_TRUE(receive.open(next_h, next_dg, out, t0));
  EXPECT_EQ(receive.epoch(), 67u);
}

TEST(TripKeys, APreviousEpochOpensDuringItsGraceOnly) {
  const SessionKeys k = trip_vector_keys();
  const auto t0 = Clock::now();
  SendKeys send(k.s2c, {1u << 20, std::chrono::seconds(5)}, t0);
  ReceiveKeys receive(k.s2c);
  crypto::Bytes out(1);
  const auto use0 = send.next(t0);
  const Header old_h{DatagramType::data, use0.epoch_low, 2, 9, 1};
  const crypto::Bytes old_dg = seal_datagram(use0.aead, old_h, crypto::Bytes(1, 7));  // held back: a slow path
  const auto t1 = t0 + std::chrono::seconds(6);  // the epoch's age passed
  const auto use1 = send.next(t1);
  EXPECT_EQ(send.epoch(), 1u);
  const Header new_h{DatagramType::data, use1.epoch_low, 2, 9, 2};
  ASSERT_TRUE(receive.open(new_h, seal_datagram(use1.aead, new_h, crypto::Bytes(1, 8)), out, t1));
  EXPECT_EQ(receive.epoch(), 1u);
  EXPECT_TRUE(receive.open(old_h, old_dg, out, t1 + std::chrono::seconds(9)));
  EXPECT_FALSE(receive.open(old_h, old_dg, out, t1 + std::chrono::seconds(11)));
}

}  // namespace
}  // namespace pqot::trip
