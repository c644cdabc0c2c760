// SRUP-PQ envelopes in the signed and sealed modes (docs/srup-pq.md sections 2 and 6): round
// trips, the exact header layout, and every refusal of the receive order with the reason the spec
// names — including the attacks the original SRUP fell to (a forged sequence number, a message for
// A replayed to B, a message moved to another topic, a downgrade).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/rsa.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/envelope.hpp"
#include "pqot/srup/protect.hpp"

namespace pqot::srup {
namespace {

constexpr std::uint64_t kNow = 1'790'000'000'000;  // ms since the epoch, a fixed "now"
const std::string kTopic = "srup/d/00000000000000a1/cmd";

struct Peer {
  Identity identity;
  PeerKeys keys;
};

Peer make_peer(std::uint64_t id, Suite suite, std::uint8_t seed_byte) {
  const SuiteInfo info = suite_info(suite);
  if (info.legacy) {  // RSA keys have no seeds: fresh RSA-2048 pairs for signing and OAEP
    const auto sk = crypto::signature_by_name(info.signature).keygen();
    const auto kk = crypto::rsa_oaep_by_name(info.kem).keygen();
    return Peer{{id, suite, sk.secret_key, kk.secret_key, kk.public_key}, {suite, sk.public_key, kk.public_key}};
  }
  const auto& sig = crypto::signature_by_name(info.signature);
  const auto& kem = crypto::kem_by_name(info.kem);
  const auto sk = sig.keygen(Bytes(sig.seed_size(), seed_byte));
  const auto kk = kem.generate_keypair(Bytes(kem.keygen_seed_size(), seed_byte));
  Peer p;
  p.identity = {id, suite, sk.secret_key, kk.secret_key, kk.public_key};
  p.keys = {suite, sk.public_key, kk.public_key};
  return p;
}

Header header_for(MessageType type, Mode mode, std::uint64_t from, std::uint64_t to,
                  std::uint64_t seq, Suite suite = kDefaultSuite) {
  Header h;
  h.type = type;
  h.suite = suite;
  h.mode = mode;
  h.sender = from;
  h.recipient = to;
  h.sequence = seq;
  h.timestamp_ms = kNow;
  h.lifetime_ms = 60'000;
  h.topic = topic_tag(kTopic);
  h.token = {'t', 'o', 'k'};
  return h;
}

class SrupEnvelope : public ::testing::TestWithParam<Suite> {
 protected:
  Peer c2 = make_peer(0xc2, GetParam(), 1);
  Peer device = make_peer(0xa1, GetParam(), 2);
  Peer other = make_peer(0xb2, GetParam(), 3);
  std::map<std::uint64_t, const PeerKeys*> enrolled = {{0xc2, &c2.keys}, {0xb2, &other.keys}};

  PeerLookup lookup() const {
    return [this](std::uint64_t id) -> const PeerKeys* {
      const auto it = enrolled.find(id);
      return it == enrolled.end() ? nullptr : it->second;
    };
  }
  Bytes action(std::uint64_t seq = 7) const {
    const Bytes body = {0x07, 0x00};  // action 7, no argument
    return protect(header_for(MessageType::action, Mode::sealed, 0xc2, 0xa1, seq, GetParam()),
                   body, c2.identity, &device.keys);
  }
  Refusal refusal_of(ByteView wire, std::string_view topic = kTopic, std::uint64_t now = kNow,
                     const Identity* as = nullptr) const {
    try {
      (void)open_protected(wire, topic, now, as ? *as : device.identity, lookup());
    } catch (const Refused& r) {
      return r.reason();
    }
    ADD_FAILURE() << "accepted";
    return Refusal::malformed;
  }
};

TEST_P(SrupEnvelope, SealedAndSignedRoundTrip) {
  const Bytes wire = action(7);
  const Opened sealed = open_protected(wire, kTopic, kNow, device.identity, lookup());
  EXPECT_EQ(sealed.header.sequence, 7u);
  EXPECT_EQ(sealed.header.sender, 0xc2u);
  EXPECT_EQ(Bytes(sealed.body.begin(), sealed.body.end()), (Bytes{0x07, 0x00}));
  // A sealed body is not on the wire in the clear (32 bytes: a chance match is 2^-256).
  const Bytes secret_body(32, 0x41);
  const Bytes sealed_wire =
      protect(header_for(MessageType::data, Mode::sealed, 0xc2, 0xa1, 8, GetParam()), secret_body,
              c2.identity, &device.keys);
  EXPECT_EQ(std::search(sealed_wire.begin(), sealed_wire.end(), secret_body.begin(),
                        secret_body.end()),
            sealed_wire.end());
  // A join request is signed (clear body).
  enrolled[0xa1] = &device.keys;
  const Bytes body = {'k', 'e', 'y', 's'};
  const Bytes join = protect(header_for(MessageType::join_request, Mode::signed_clear, 0xa1, 0xc2, 1,
                                        GetParam()),
                             body, device.identity);
  const Opened o = open_protected(join, kTopic, kNow, c2.identity, lookup());
  EXPECT_EQ(Bytes(o.body.begin(), o.body.end()), body);
}

TEST_P(SrupEnvelope, HeaderLayoutIsTheSpecs) {
  const Bytes wire = action(0x0102030405060708);
  const EnvelopeView v = parse_envelope(wire);
  // magic, version, type, suite, mode
  EXPECT_EQ(crypto::to_hex(ByteView(wire).first(8)),
            "53525051" "01" "04" + crypto::to_hex(Bytes{static_cast<std::uint8_t>(GetParam())}) + "01");
  EXPECT_EQ(crypto::to_hex(ByteView(wire).subspan(8, 8)), "00000000000000c2");   // sender
  EXPECT_EQ(crypto::to_hex(ByteView(wire).subspan(16, 8)), "00000000000000a1");  // recipient
  EXPECT_EQ(crypto::to_hex(ByteView(wire).subspan(24, 8)), "0102030405060708");  // sequence
  EXPECT_EQ(wire[52], 3);                                                          // token length
  EXPECT_EQ(v.header_bytes.size(), kFixedHeader + 3);
  const WireSizes sizes = wire_sizes(GetParam());
  EXPECT_EQ(wire.size(), kFixedHeader + 3 + sizes.kem_ciphertext + 2 + kAeadTag + sizes.signature);
}

TEST_P(SrupEnvelope, EveryFlippedByteIsRefusedAndNothingElseIsAccepted) {
  const Bytes wire = action();
  // Flip one bit in a spread of positions covering every field (all of them for small envelopes).
  const std::size_t step = wire.size() > 2000 ? 7 : 1;
  for (std::size_t i = 0; i < wire.size(); i += step) {
    Bytes bad = wire;
    bad[i] ^= 0x01;
    bool refused = false;
    try {
      (void)open_protected(bad, kTopic, kNow, device.identity, lookup());
    } catch (const Refused&) {
      refused = true;
    }
    EXPECT_TRUE(refused) << "byte " << i << " flipped and still accepted";
  }
}

TEST_P(SrupEnvelope, RefusalsNameTheFirstFailingStep) {
  const Bytes wire = action();
  // Step 1: truncated, padded, too large.
  EXPECT_EQ(refusal_of(ByteView(wire).first(wire.size() - 1)), Refusal::malformed);
  Bytes padded = wire;
  padded.push_back(0);
  EXPECT_EQ(refusal_of(padded), Refusal::malformed);
  EXPECT_EQ(refusal_of(Bytes(kMaxEnvelope + 1, 0x53)), Refusal::malformed);
  EXPECT_EQ(refusal_of(Bytes(20, 0x05)), Refusal::malformed);  // the original's over-read case
  // Step 3: a sender nobody enrolled, even with a valid signature of its own.
  Peer stranger = make_peer(0xee, GetParam(), 9);
  const Bytes from_stranger = protect(
      header_for(MessageType::action, Mode::sealed, 0xee, 0xa1, 1, GetParam()), Bytes{1, 0},
      stranger.identity, &device.keys);
  EXPECT_EQ(refusal_of(from_stranger), Refusal::unknown_sender);
  // Step 5: the C2's ID with the stranger's key, sequence 2^64 - 1 (the original's lock-out).
  Identity forger = stranger.identity;
  forger.id = 0xc2;
  const Bytes forged = protect(
      header_for(MessageType::action, Mode::sealed, 0xc2, 0xa1, ~std::uint64_t{0}, GetParam()),
      Bytes{1, 0}, forger, &device.keys);
  EXPECT_EQ(refusal_of(forged), Refusal::bad_signature);
  // Step 6: the message for A opened by B (B knows the C2, and it is validly signed).
  EXPECT_EQ(refusal_of(wire, kTopic, kNow, &other.identity), Refusal::wrong_recipient);
  // Step 7: moved to another topic.
  EXPECT_EQ(refusal_of(wire, "srup/d/00000000000000b2/cmd"), Refusal::wrong_topic);
  // Step 8: after its lifetime, and from too far in the future.
  EXPECT_EQ(refusal_of(wire, kTopic, kNow + 60'001), Refusal::expired);
  EXPECT_EQ(refusal_of(wire, kTopic, kNow - 5 * 60'000 - 1), Refusal::expired);
  EXPECT_NO_THROW((void)open_protected(wire, kTopic, kNow + 60'000, device.identity, lookup()));
  // Step 9: sealed to another KEM key than the one the receiver holds.
  const Bytes to_other_key = protect(
      header_for(MessageType::action, Mode::sealed, 0xc2, 0xa1, 8, GetParam()), Bytes{1, 0},
      c2.identity, &other.keys);
  EXPECT_EQ(refusal_of(to_other_key), Refusal::decrypt_failed);
}

TEST_P(SrupEnvelope, DowngradeToAnotherSuiteIsRefused) {
  // The C2 is enrolled with this suite; an envelope claiming another one is refused before any
  // signature work, even if it is validly signed under a key of that other suite.
  const Suite weaker = GetParam() == Suite::ed25519_xwing ? Suite::mldsa65_mlkem768
                                                            : Suite::ed25519_xwing;
  Peer impostor = make_peer(0xc2, weaker, 4);
  Peer device_weaker = make_peer(0xa1, weaker, 2);
  const Bytes wire = protect(header_for(MessageType::action, Mode::sealed, 0xc2, 0xa1, 9, weaker),
                             Bytes{1, 0}, impostor.identity, &device_weaker.keys);
  EXPECT_EQ(refusal_of(wire), Refusal::unsupported_suite);
}

// Section 3: the legacy RSA suite only from peers enrolled as legacy; a genuine RSA-signed,
// RSA-sealed envelope from a C2 enrolled with a post-quantum suite is a downgrade.
TEST(SrupEnvelopeLegacy, LegacySuiteOnlyFromPeersEnrolledAsLegacy) {
  const Peer modern_c2 = make_peer(0xc2, Suite::mldsa65_mlkem768, 1);
  const Peer legacy_c2 = make_peer(0xc2, Suite::legacy_rsa2048, 0);
  const Peer legacy_device = make_peer(0xa1, Suite::legacy_rsa2048, 0);
  const Bytes wire = protect(header_for(MessageType::action, Mode::sealed, 0xc2, 0xa1, 1, Suite::legacy_rsa2048),
                             Bytes{7, 0}, legacy_c2.identity, &legacy_device.keys);
  const auto as_enrolled = [](const PeerKeys& keys) {
    return [&keys](std::uint64_t id) -> const PeerKeys* { return id == 0xc2 ? &keys : nullptr; };
  };
  const Opened ok = open_protected(wire, kTopic, kNow, legacy_device.identity, as_enrolled(legacy_c2.keys));
  EXPECT_EQ(Bytes(ok.body.begin(), ok.body.end()), (Bytes{7, 0}));
  try {
    (void)open_protected(wire, kTopic, kNow, legacy_device.identity, as_enrolled(modern_c2.keys));
    ADD_FAILURE() << "a legacy envelope from a modern peer was accepted";
  } catch (const Refused& e) {
    EXPECT_EQ(e.reason(), Refusal::unsupported_suite);
  }
}

TEST_P(SrupEnvelope, ModesAreFixedPerType) {
  // A join request may not come sealed, an action may not come signed-only.
  EXPECT_THROW((void)protect(header_for(MessageType::action, Mode::signed_clear, 0xc2, 0xa1, 1,
                                        GetParam()),
                             Bytes{1, 0}, c2.identity),
               std::invalid_argument);
  Bytes wire = action();
  wire[7] = static_cast<std::uint8_t>(Mode::signed_clear);  // relabelled on the wire
  EXPECT_EQ(refusal_of(wire), Refusal::malformed);
}

INSTANTIATE_TEST_SUITE_P(Suites, SrupEnvelope,
                         ::testing::Values(Suite::mldsa65_mlkem768, Suite::ed25519_xwing,
                                           Suite::hybrid_xwing, Suite::legacy_rsa2048),
                         [](const auto& info) {
                           return std::to_string(static_cast<int>(info.param));
                         });

}  // namespace
}  // namespace pqot::srup
