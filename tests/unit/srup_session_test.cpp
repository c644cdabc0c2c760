// SRUP-PQ session mode (docs/srup-pq.md section 4): the signed offer/accept, traffic both ways
// under per-direction keys, every tampered field refused, epochs (4.2) and the session's end.
#include <gtest/gtest.h>

#include <stdexcept>

#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/session.hpp"

namespace pqot::srup {
namespace {

constexpr std::uint64_t kSessionNow = 1'790'000'000'000;
const std::string kTopicD = "srup/d/00000000000000a1/session";  // C2 -> device
const std::string kTopicC = "srup/c2/00000000000000c2/session";  // device -> C2

struct SessionPeer {
  Identity identity;
  PeerKeys keys;
};

SessionPeer make_session_peer(std::uint64_t id, Suite suite, std::uint8_t seed) {
  const SuiteInfo info = suite_info(suite);
  const auto& sig = crypto::signature_by_name(info.signature);
  const auto& kem = crypto::kem_by_name(info.kem);
  const auto sk = sig.keygen(Bytes(sig.seed_size(), seed));
  const auto kk = kem.generate_keypair(Bytes(kem.keygen_seed_size(), seed));
  return {{id, suite, sk.secret_key, kk.secret_key, kk.public_key}, {suite, sk.public_key, kk.public_key}};
}

Header hdr(std::uint64_t to, std::uint64_t seq, const std::string& topic,
           MessageType type = MessageType::data, std::uint64_t ts = kSessionNow) {
  Header h;
  h.type = type;
  h.recipient = to;
  h.sequence = seq;
  h.timestamp_ms = ts;
  h.lifetime_ms = 60'000;
  h.topic = topic_tag(topic);
  h.token = {'t', 'o', 'k'};
  return h;
}

Refusal refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const Refused& r) {
    return r.reason();
  }
  ADD_FAILURE() << "accepted";
  return Refusal::malformed;
}

Bytes text(std::string_view s) { return Bytes(s.begin(), s.end()); }
Bytes body_of(const Opened& o) { return Bytes(o.body.begin(), o.body.end()); }

// The device (0xa1) initiates, as the connecting side; the C2 (0xc2) responds.
class SrupSession : public ::testing::Test {
 protected:
  explicit SrupSession(Suite suite = Suite::ed25519_xwing)
      : device(make_session_peer(0xa1, suite, 1)), c2(make_session_peer(0xc2, suite, 2)) {}

  PeerLookup c2_peers() const {
    return [this](std::uint64_t id) { return id == 0xa1 ? &device.keys : nullptr; };
  }
  // A full exchange: {device's session, C2's session}.
  std::pair<Session, Session> establish(SessionLimits device_limits = {},
                                        SessionLimits c2_limits = {}, std::uint64_t at = kSessionNow) {
    SessionInitiator init(hdr(0xc2, 1, kTopicC, MessageType::session_offer, at), device.identity,
                          c2.keys, device_limits);
    const VerifiedOffer offer =
        SessionResponder::verify(init.offer(), kTopicC, at, c2.identity, c2_peers());
    auto accepted = SessionResponder::accept(
        offer, hdr(0xa1, 1, kTopicD, MessageType::session_accept, at), c2.identity, at, c2_limits);
    Session mine = init.complete(accepted.accept, kTopicD, at);
    return {std::move(mine), std::move(accepted.session)};
  }

  SessionPeer device;
  SessionPeer c2;
};

TEST_F(SrupSession, OfferAcceptThenTrafficBothWays_4_1) {
  auto [dev, srv] = establish();
  EXPECT_EQ(dev.id(), srv.id());
  EXPECT_EQ(dev.role(), SessionRole::initiator);
  EXPECT_EQ(srv.role(), SessionRole::responder);
  for (std::uint64_t seq = 1; seq <= 5; ++seq) {
    const Bytes up = dev.seal(hdr(0xc2, seq, kTopicC), text("up"), kSessionNow);
    const Opened o = srv.open(up, kTopicC, kSessionNow);
    EXPECT_EQ(body_of(o), text("up"));
    EXPECT_EQ(o.header.sequence, seq);
    EXPECT_EQ(o.header.mode, Mode::session);
    const Bytes down = srv.seal(hdr(0xa1, seq, kTopicD, MessageType::action), Bytes{7, 0}, kSessionNow);
    EXPECT_EQ(body_of(dev.open(down, kTopicD, kSessionNow)), (Bytes{7, 0}));
  }
  // Each side's own envelopes do not open as the peer's: per-direction keys and nonce bytes.
  const Bytes up = dev.seal(hdr(0xc2, 6, kTopicC), text("x"), kSessionNow);
  EXPECT_EQ(refusal([&] { dev.open(up, kTopicC, kSessionNow); }), Refusal::unknown_sender);
}

class SrupSessionDefaultSuite : public SrupSession {
 protected:
  SrupSessionDefaultSuite() : SrupSession(kDefaultSuite) {}
};

TEST_F(SrupSessionDefaultSuite, OfferAcceptAndTrafficWithMlDsa65MlKem768) {
  auto [dev, srv] = establish();
  EXPECT_EQ(dev.suite(), Suite::mldsa65_mlkem768);
  const Bytes up = dev.seal(hdr(0xc2, 1, kTopicC), text("reading"), kSessionNow);
  EXPECT_EQ(body_of(srv.open(up, kTopicC, kSessionNow)), text("reading"));
  const Bytes down = srv.seal(hdr(0xa1, 1, kTopicD), text("ack"), kSessionNow);
  EXPECT_EQ(body_of(dev.open(down, kTopicD, kSessionNow)), text("ack"));
}

TEST_F(SrupSession, EveryTamperedByteIsRefusedAndChangesNothing_6) {
  auto [dev, srv] = establish();
  const Bytes wire = dev.seal(hdr(0xc2, 1, kTopicC), text("hello"), kSessionNow);
  for (std::size_t i = 0; i < wire.size(); ++i) {
    Bytes bad = wire;
    bad[i] ^= 0x01;
    EXPECT_ANY_THROW(srv.open(bad, kTopicC, kSessionNow)) << "byte " << i;
  }
  EXPECT_EQ(srv.receive_epoch(), 0u);
  EXPECT_EQ(body_of(srv.open(wire, kTopicC, kSessionNow)), text("hello"));  // still opens
}

TEST_F(SrupSession, EachHeaderFieldNamesItsRefusal_6) {
  auto [dev, srv] = establish();
  const Bytes wire = dev.seal(hdr(0xc2, 1, kTopicC), text("hello"), kSessionNow);
  const auto flipped = [&](std::size_t at, std::uint8_t x = 0x01) {
    Bytes b = wire;
    b[at] ^= x;
    return refusal([&] { srv.open(b, kTopicC, kSessionNow); });
  };
  EXPECT_EQ(flipped(0), Refusal::malformed);                 // magic
  EXPECT_EQ(flipped(4), Refusal::malformed);                 // version
  EXPECT_EQ(flipped(5, 0x05 ^ 0x04), Refusal::decrypt_failed);  // type Data -> Action (session-able)
  EXPECT_EQ(flipped(5, 0x05 ^ 0x31), Refusal::malformed);    // type -> Session Offer: mode 0 only
  EXPECT_EQ(flipped(6, 0x06 ^ 0x01), Refusal::unsupported_suite);  // suite 6 -> 1
  EXPECT_EQ(flipped(7, 0x02 ^ 0x03), Refusal::malformed);    // mode 2 -> 3 needs recipient 0
  EXPECT_EQ(flipped(15), Refusal::unknown_sender);           // sender
  EXPECT_EQ(flipped(23), Refusal::decrypt_failed);           // recipient (authenticated)
  EXPECT_EQ(flipped(31), Refusal::decrypt_failed);           // sequence: another nonce
  EXPECT_EQ(flipped(39), Refusal::decrypt_failed);           // timestamp
  EXPECT_EQ(flipped(43), Refusal::decrypt_failed);           // lifetime
  EXPECT_EQ(flipped(44), Refusal::decrypt_failed);           // topic tag
  EXPECT_EQ(flipped(53), Refusal::decrypt_failed);           // token
  EXPECT_EQ(flipped(56, 0x10), Refusal::malformed);          // body length
  EXPECT_EQ(flipped(61), Refusal::decrypt_failed);           // epoch 0 -> 1: a key, the wrong one
  EXPECT_EQ(flipped(60), Refusal::decrypt_failed);           // epoch 0 -> 2^8: no key
  EXPECT_EQ(flipped(62), Refusal::decrypt_failed);           // ciphertext
  EXPECT_EQ(flipped(wire.size() - 1), Refusal::decrypt_failed);  // tag
  // Authentic, but moved to another topic or opened too late or too early.
  EXPECT_EQ(refusal([&] { srv.open(wire, kTopicD, kSessionNow); }), Refusal::wrong_topic);
  EXPECT_EQ(refusal([&] { srv.open(wire, kTopicC, kSessionNow + 60'001); }), Refusal::expired);
  EXPECT_EQ(refusal([&] { srv.open(wire, kTopicC, kSessionNow - 300'001); }), Refusal::expired);
  EXPECT_EQ(srv.receive_epoch(), 0u);
}

TEST_F(SrupSession, MessageUnderAnotherSessionIsRefused) {
  auto [dev1, srv1] = establish();
  auto [dev2, srv2] = establish();
  EXPECT_NE(dev1.id(), dev2.id());
  const Bytes wire = dev1.seal(hdr(0xc2, 1, kTopicC), text("one"), kSessionNow);
  EXPECT_EQ(refusal([&] { srv2.open(wire, kTopicC, kSessionNow); }), Refusal::decrypt_failed);
  EXPECT_EQ(body_of(srv1.open(wire, kTopicC, kSessionNow)), text("one"));
  // A session with a third peer does not take this device's envelopes at all.
  SessionPeer other = make_session_peer(0xb2, Suite::ed25519_xwing, 3);
  SessionInitiator init(hdr(0xc2, 1, kTopicC, MessageType::session_offer), other.identity, c2.keys);
  const auto offer = SessionResponder::verify(init.offer(), kTopicC, kSessionNow, c2.identity,
                                              [&](std::uint64_t id) {
                                                return id == 0xb2 ? &other.keys : nullptr;
                                              });
  auto acc = SessionResponder::accept(offer, hdr(0xb2, 1, kTopicD), c2.identity, kSessionNow);
  EXPECT_EQ(refusal([&] { acc.session.open(wire, kTopicC, kSessionNow); }), Refusal::unknown_sender);
}

TEST_F(SrupSession, AcceptForAnotherOfferIsRefusedAndTheRightOneStillWorks_4_1) {
  SessionInitiator first(hdr(0xc2, 1, kTopicC, MessageType::session_offer), device.identity,
                         c2.keys);
  SessionInitiator second(hdr(0xc2, 2, kTopicC, MessageType::session_offer), device.identity,
                          c2.keys);
  const auto accept_for = [&](const SessionInitiator& i, std::uint64_t seq) {
    const auto offer = SessionResponder::verify(i.offer(), kTopicC, kSessionNow, c2.identity, c2_peers());
    return SessionResponder::accept(offer, hdr(0xa1, seq, kTopicD), c2.identity, kSessionNow);
  };
  auto for_second = accept_for(second, 1);
  EXPECT_EQ(refusal([&] { first.complete(for_second.accept, kTopicD, kSessionNow); }),
            Refusal::bad_request);
  EXPECT_TRUE(first.holds_ephemeral_secret());  // a refused accept changes nothing
  // An offer is not an accept, and an accept signed by another key does not verify.
  EXPECT_EQ(refusal([&] { first.complete(second.offer(), kTopicC, kSessionNow); }),
            Refusal::unknown_sender);
  Bytes forged = for_second.accept;
  forged[forged.size() - 1] ^= 1;
  EXPECT_EQ(refusal([&] { second.complete(forged, kTopicD, kSessionNow); }), Refusal::bad_signature);
  auto for_first = accept_for(first, 2);
  Session s = first.complete(for_first.accept, kTopicD, kSessionNow);
  const Bytes up = s.seal(hdr(0xc2, 3, kTopicC), text("ok"), kSessionNow);
  EXPECT_EQ(body_of(for_first.session.open(up, kTopicC, kSessionNow)), text("ok"));
}

TEST_F(SrupSession, EphemeralSecretIsWipedOnceTheAcceptIsProcessed_4_1) {
  SessionInitiator init(hdr(0xc2, 1, kTopicC, MessageType::session_offer), device.identity,
                        c2.keys);
  EXPECT_TRUE(init.holds_ephemeral_secret());
  const auto offer = SessionResponder::verify(init.offer(), kTopicC, kSessionNow, c2.identity, c2_peers());
  auto acc = SessionResponder::accept(offer, hdr(0xa1, 1, kTopicD), c2.identity, kSessionNow);
  (void)init.complete(acc.accept, kTopicD, kSessionNow);
  EXPECT_FALSE(init.holds_ephemeral_secret());
  // The same accept again (a replay) cannot derive anything: the key is gone.
  EXPECT_THROW((void)init.complete(acc.accept, kTopicD, kSessionNow), std::logic_error);
}

TEST_F(SrupSession, OfferRefusals_4_1) {
  SessionInitiator init(hdr(0xc2, 1, kTopicC, MessageType::session_offer), device.identity,
                        c2.keys);
  // Not enrolled at the responder, or on another topic.
  EXPECT_EQ(refusal([&] {
              SessionResponder::verify(init.offer(), kTopicC, kSessionNow, c2.identity,
                                       [](std::uint64_t) { return nullptr; });
            }),
            Refusal::unknown_sender);
  EXPECT_EQ(refusal([&] {
              SessionResponder::verify(init.offer(), kTopicD, kSessionNow, c2.identity, c2_peers());
            }),
            Refusal::wrong_topic);
  // Limits out of range are the caller's error.
  EXPECT_THROW(SessionInitiator(hdr(0xc2, 2, kTopicC), device.identity, c2.keys, {0, 10}),
               std::invalid_argument);
  EXPECT_THROW(SessionInitiator(hdr(0xc2, 2, kTopicC), device.identity, c2.keys,
                                {kMaxEpochMessages + 1, 10}),
               std::invalid_argument);
}

TEST_F(SrupSession, ResponderLowersTheLimitsForItsOwnSending_4_1) {
  auto [dev, srv] = establish({100, 600}, {50, 900});
  EXPECT_EQ(dev.limits().max_messages, 100u);
  EXPECT_EQ(dev.limits().max_epoch_seconds, 600u);
  EXPECT_EQ(srv.limits().max_messages, 50u);
  EXPECT_EQ(srv.limits().max_epoch_seconds, 600u);
}

TEST_F(SrupSession, SequenceMustRiseUnderTheSession) {
  auto [dev, srv] = establish();
  (void)dev.seal(hdr(0xc2, 5, kTopicC), text("a"), kSessionNow);
  EXPECT_THROW(dev.seal(hdr(0xc2, 5, kTopicC), text("b"), kSessionNow), std::invalid_argument);
  EXPECT_THROW(dev.seal(hdr(0xc2, 4, kTopicC), text("b"), kSessionNow), std::invalid_argument);
  EXPECT_NO_THROW(dev.seal(hdr(0xc2, 6, kTopicC), text("b"), kSessionNow));
  // A type that never travels in session mode is refused before anything changes.
  EXPECT_THROW(dev.seal(hdr(0xc2, 7, kTopicC, MessageType::join_request), text("b"), kSessionNow),
               std::invalid_argument);
  EXPECT_EQ(dev.send_epoch(), 0u);
}

TEST_F(SrupSession, RekeysAcrossEpochsByCountAndByTime_4_2) {
  auto [dev, srv] = establish({3, 10});
  std::uint64_t now = kSessionNow;
  std::uint64_t seq = 0;
  const auto send = [&] {
    const Bytes w = dev.seal(hdr(0xc2, ++seq, kTopicC, MessageType::data, now), text("m"), now);
    EXPECT_EQ(body_of(srv.open(w, kTopicC, now)), text("m"));
  };
  for (int i = 0; i < 3; ++i) send();
  EXPECT_EQ(dev.send_epoch(), 0u);
  send();  // the 4th message moves by count
  EXPECT_EQ(dev.send_epoch(), 1u);
  EXPECT_EQ(srv.receive_epoch(), 1u);
  now += 10'000;  // 10 s later: moves by time, with one message in the epoch
  send();
  EXPECT_EQ(dev.send_epoch(), 2u);
  EXPECT_EQ(srv.receive_epoch(), 2u);
  for (int i = 0; i < 9; ++i) send();  // 3 more epochs by count
  EXPECT_EQ(dev.send_epoch(), 5u);
  EXPECT_EQ(srv.receive_epoch(), 5u);
}

TEST_F(SrupSession, PreviousEpochOnlyWithinGraceAndNeverTwoAhead_4_2) {
  auto [dev, srv] = establish({1, 3600});
  std::uint64_t seq = 0;
  const auto seal = [&](std::uint64_t t) {
    Header h = hdr(0xc2, ++seq, kTopicC, MessageType::data, t);
    h.lifetime_ms = 600'000;  // long-lived, so that only the epoch rules refuse
    return dev.seal(h, text("m"), t);
  };
  const Bytes e0 = seal(kSessionNow);  // epoch 0
  const Bytes e1 = seal(kSessionNow);  // epoch 1 (one message per epoch)
  const Bytes e2 = seal(kSessionNow);  // epoch 2
  const Bytes e3 = seal(kSessionNow);  // epoch 3
  EXPECT_EQ(refusal([&] { srv.open(e2, kTopicC, kSessionNow); }), Refusal::decrypt_failed);  // two ahead
  EXPECT_EQ(srv.receive_epoch(), 0u);
  // A forgery naming the next epoch does not move the receiver on.
  Bytes forged = e1;
  forged.back() ^= 1;
  EXPECT_EQ(refusal([&] { srv.open(forged, kTopicC, kSessionNow); }), Refusal::decrypt_failed);
  EXPECT_EQ(srv.receive_epoch(), 0u);
  EXPECT_NO_THROW(srv.open(e1, kTopicC, kSessionNow + 1'000));  // epoch 1 adopted at +1 s
  EXPECT_EQ(srv.receive_epoch(), 1u);
  EXPECT_NO_THROW(srv.open(e0, kTopicC, kSessionNow + 31'000));  // previous, within 60 s
  EXPECT_NO_THROW(srv.open(e2, kTopicC, kSessionNow + 31'000));  // now one ahead: adopted at +31 s
  EXPECT_EQ(srv.receive_epoch(), 2u);
  EXPECT_EQ(refusal([&] { srv.open(e0, kTopicC, kSessionNow + 31'000); }), Refusal::decrypt_failed);
  EXPECT_NO_THROW(srv.open(e1, kTopicC, kSessionNow + 91'000));  // previous: 60 s after +31 s
  EXPECT_EQ(refusal([&] { srv.open(e1, kTopicC, kSessionNow + 91'001); }), Refusal::decrypt_failed);
  EXPECT_NO_THROW(srv.open(e3, kTopicC, kSessionNow + 92'000));
  EXPECT_EQ(srv.receive_epoch(), 3u);
}

TEST_F(SrupSession, SessionEndsAfter30Days_4_2) {
  auto [dev, srv] = establish();
  const std::uint64_t later = kSessionNow + kSessionLifetimeMs;
  EXPECT_FALSE(dev.ended(later - 1));
  EXPECT_TRUE(dev.ended(later));
  EXPECT_THROW(dev.seal(hdr(0xc2, 1, kTopicC, MessageType::data, later), text("m"), later),
               SessionEnded);
  const Bytes w = dev.seal(hdr(0xc2, 1, kTopicC, MessageType::data, later - 1), text("m"),
                           later - 1);
  EXPECT_EQ(refusal([&] { srv.open(w, kTopicC, later); }), Refusal::decrypt_failed);
}

TEST_F(SrupSession, SessionEndsAfter2To16Epochs_4_2) {
  auto [dev, srv] = establish({1, 3600});
  std::uint64_t seq = 0;
  for (std::uint32_t e = 0; e < kSessionEpochs; ++e) {
    (void)dev.seal(hdr(0xc2, ++seq, kTopicC), Bytes{}, kSessionNow);
  }
  EXPECT_EQ(dev.send_epoch(), kSessionEpochs - 1);
  EXPECT_THROW(dev.seal(hdr(0xc2, ++seq, kTopicC), Bytes{}, kSessionNow), SessionEnded);
  EXPECT_TRUE(dev.ended(kSessionNow));
}

}  // namespace
}  // namespace pqot::srup
