// The known-answer vectors of docs/srup-pq.md, Appendix A: fixed keys, KEM seed and signing
// randomness give exactly these bytes, so a second implementation can check itself against them
// and any change to the format shows here.
#include <gtest/gtest.h>

#include <map>

#include "pqot/crypto/aead.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/hkdf.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/protect.hpp"
#include "pqot/srup/session.hpp"
#include "pqot/srup/telemetry.hpp"

namespace pqot::srup {
namespace {

namespace crypto = pqot::crypto;

Header appendix_header() {
  Header h;
  h.type = MessageType::action;
  h.suite = Suite::mldsa65_mlkem768;
  h.mode = Mode::sealed;
  h.sender = 0xc2;
  h.recipient = 0xa1;
  h.sequence = 1;
  h.timestamp_ms = 1'790'000'000'000;
  h.lifetime_ms = 60'000;
  h.topic = topic_tag("srup/d/00000000000000a1/cmd");
  h.token = {'t', 'o', 'k'};
  return h;
}

// A.1: a sealed Action (action 7, no argument), ML-DSA-65/ML-KEM-768.
TEST(SrupVectors, SealedActionA1) {
  const auto& sig = crypto::signature_by_name("ML-DSA-65");
  const auto& kem = crypto::kem_by_name("ML-KEM-768");
  const auto c2_sig = sig.keygen(Bytes(32, 0x01));
  const auto c2_kem = kem.generate_keypair(Bytes(64, 0x05));
  const auto device_kem = kem.generate_keypair(Bytes(64, 0x02));
  const Identity c2{0xc2, Suite::mldsa65_mlkem768, c2_sig.secret_key, c2_kem.secret_key,
                    c2_kem.public_key};
  const PeerKeys device{Suite::mldsa65_mlkem768, {}, device_kem.public_key};
  const Bytes m(32, 0x03), rnd(32, 0x00);
  const Bytes wire = protect(appendix_header(), Bytes{0x07, 0x00}, c2, &device, {m, rnd});
  EXPECT_EQ(wire.size(), 4473u);
  EXPECT_EQ(crypto::to_hex(ByteView(wire).first(60)),
            "535250510104010100000000000000c200000000000000a10000000000000001000001a0c4506c0000"
            "00ea605ebe3a3bd2cc048f03746f6b00126801");
  EXPECT_EQ(crypto::to_hex(crypto::sha256(wire)),
            "036531d17441fc2b5ac26b1bd36b9495a4fbad4bfd22ae783eeeeb98c858945c");
  // And it opens for the device, whose identity holds the KEM secret.
  const Identity dev{
      0xa1, Suite::mldsa65_mlkem768, {}, device_kem.secret_key, device_kem.public_key};
  const PeerKeys c2_keys{Suite::mldsa65_mlkem768, c2_sig.public_key, c2_kem.public_key};
  const Opened o =
      open_protected(wire, "srup/d/00000000000000a1/cmd", 1'790'000'000'000, dev,
                     [&](std::uint64_t id) { return id == 0xc2 ? &c2_keys : nullptr; });
  EXPECT_EQ(Bytes(o.body.begin(), o.body.end()), (Bytes{0x07, 0x00}));
}

// A.2: a signed Join Request (body "keys"), Ed25519/X-Wing: the whole envelope.
TEST(SrupVectors, SignedJoinRequestA2) {
  const auto& ed = crypto::signature_by_name("Ed25519");
  const auto& xw = crypto::kem_by_name("X-Wing");
  const auto sig = ed.keygen(Bytes(32, 0x04));
  const auto kem = xw.generate_keypair(Bytes(32, 0x06));
  const Identity device{0xa1, Suite::ed25519_xwing, sig.secret_key, kem.secret_key, kem.public_key};
  Header h = appendix_header();
  h.type = MessageType::join_request;
  h.suite = Suite::ed25519_xwing;
  h.mode = Mode::signed_clear;
  h.sender = 0xa1;
  h.recipient = 0xc2;
  h.topic = topic_tag("srup/c2/00000000000000c2/join");
  const Bytes wire = protect(h, Bytes{'k', 'e', 'y', 's'}, device);
  EXPECT_EQ(crypto::to_hex(wire),
            "535250510109060000000000000000a100000000000000c20000000000000001000001a0c4506c0000"
            "00ea6096128f5d5dc1c99203746f6b00046b65797377865f2ee44c23546d2da3a3bf592674df58a0b8"
            "e309cd27f320d6e549196d8cce59b81f154f83ef1da2bcc6c1b5a151220fe2882afbd5d510a4b2fe2a"
            "c29200");
}


// ---- A.3 and A.4: Ed25519/X-Wing, deterministic Ed25519 ------------------------------------

constexpr std::uint64_t kAppendixNow = 1'790'000'000'000;
const std::string kOfferTopic = "srup/c2/00000000000000c2/session";
const std::string kAcceptTopic = "srup/d/00000000000000a1/session";

Header aead_appendix_header(MessageType type, std::uint64_t to, std::uint64_t seq,
                            const std::string& topic) {
  Header h = appendix_header();
  h.type = type;
  h.suite = Suite::ed25519_xwing;
  h.recipient = to;
  h.sequence = seq;
  h.topic = topic_tag(topic);
  return h;
}

std::string hex(ByteView b) { return crypto::to_hex(b); }

// The key and AEAD of section 4.1 and 2.2 computed from the primitives, not through Session.
crypto::SecretBytes expand(ByteView prk, std::string_view label) {
  return crypto::hkdf_sha256_expand(prk, crypto::as_bytes(label), 32);
}

// A.3: Session Offer (device 0xa1 -> C2 0xc2), Session Accept, the first session envelope.
TEST(SrupVectors, SessionA3) {
  const auto& ed = crypto::signature_by_name("Ed25519");
  const auto& xw = crypto::kem_by_name("X-Wing");
  const auto dsig = ed.keygen(Bytes(32, 0x04));
  const auto csig = ed.keygen(Bytes(32, 0x05));
  const Identity device{0xa1, Suite::ed25519_xwing, dsig.secret_key, {}, {}};
  const Identity c2{0xc2, Suite::ed25519_xwing, csig.secret_key, {}, {}};
  const PeerKeys device_keys{Suite::ed25519_xwing, dsig.public_key, {}};
  const PeerKeys c2_keys{Suite::ed25519_xwing, csig.public_key, {}};
  const Bytes eph_seed(32, 0x07), sid(8, 0x08), encaps_seed(64, 0x09);
  SessionInitiator init(aead_appendix_header(MessageType::session_offer, 0xc2, 1, kOfferTopic),
                        device, c2_keys, {}, {eph_seed, sid, {}, {}});
  const Bytes& offer = init.offer();
  EXPECT_EQ(offer.size(), 1356u);
  EXPECT_EQ(hex(ByteView(offer).first(64)),
            "535250510131060000000000000000a100000000000000c20000000000000001000001a0c4506c0000"
            "00ea60a95cf2580ef6fdfc03746f6b04d204c00e12760b");
  EXPECT_EQ(hex(crypto::sha256(offer)),
            "f96f7481ebdb9841bc27b2814aee3cf957fb7facd6bbdc75878d46f37d62522b");
  const VerifiedOffer verified = SessionResponder::verify(
      offer, kOfferTopic, kAppendixNow, c2, [&](std::uint64_t) { return &device_keys; });
  auto accepted = SessionResponder::accept(
      verified, aead_appendix_header(MessageType::session_accept, 0xa1, 1, kAcceptTopic), c2,
      kAppendixNow, {}, {{}, {}, encaps_seed, {}});
  const Bytes& accept = accepted.accept;
  EXPECT_EQ(accept.size(), 1284u);
  EXPECT_EQ(hex(ByteView(accept).first(70)),
            "535250510132060000000000000000c200000000000000a10000000000000001000001a0c4506c0000"
            "00ea607655fad608e9f8c503746f6b048a080808080808080804600218");
  EXPECT_EQ(hex(crypto::sha256(accept)),
            "8f0484a416acaa72feeb790d5f57743434324afcc820a65acf76d59e87aa582d");
  Session session = init.complete(accept, kAcceptTopic, kAppendixNow);
  const Bytes body = crypto::from_hex("0474656d700a41b80000");  // Data "temp" = float32 23.0
  const Bytes first =
      session.seal(aead_appendix_header(MessageType::data, 0xc2, 2, kOfferTopic), body,
                   kAppendixNow);
  EXPECT_EQ(hex(first),
            "535250510105060200000000000000a100000000000000c20000000000000002000001a0c4506c0000"
            "00ea60a95cf2580ef6fdfc03746f6b001a00000000bafdb8b40bd70bc5dc63480e87fa52c5f7ccc24d"
            "b20de0ecd05b");
  // Section 4.1 step 3 and the session nonce of 2.2, from the primitives.
  const auto eph = xw.generate_keypair(eph_seed);
  const ByteView ct = ByteView(accept).subspan(58 + 8 + 2, xw.ciphertext_size());
  const crypto::SecretBytes ss = xw.decapsulate(eph.secret_key, ct);
  const auto t = crypto::sha256({offer, accept});
  const crypto::SecretBytes prk = crypto::hkdf_sha256_extract(ss, t);
  const crypto::SecretBytes k_i2r = expand(prk, "sruppq1 session i2r");
  const Bytes nonce = crypto::from_hex("730000000000000000000002");
  const ByteView header = ByteView(first).first(58);
  EXPECT_EQ(hex(ByteView(first).subspan(62)),
            hex(crypto::aes_gcm_encrypt(k_i2r, nonce, header, body)));
  EXPECT_EQ(hex(t), "4fd7580fd253562d75564a421300b514be428500ccb42fcaa97d5914af2f89cb");
  EXPECT_EQ(hex(k_i2r), "e686b6733ecb6d8ce4bfc9de9d5e6a372b530d891226597642dfbb3e3cc79421");
}

// A.4: a Telemetry Key to reader 0xc2, a Telemetry envelope and the Checkpoint over it.
TEST(SrupVectors, TelemetryA4) {
  const auto& ed = crypto::signature_by_name("Ed25519");
  const auto& xw = crypto::kem_by_name("X-Wing");
  const auto dsig = ed.keygen(Bytes(32, 0x04));
  const Identity device{0xa1, Suite::ed25519_xwing, dsig.secret_key, {}, {}};
  const auto reader_kem = xw.generate_keypair(Bytes(32, 0x0a));
  ReaderSet readers;
  readers.readers.push_back({0xc2, Suite::ed25519_xwing, reader_kem.public_key});
  std::map<std::uint64_t, std::uint64_t> counter;
  std::uint64_t now = kAppendixNow;
  TelemetrySender sender(
      device, 1,
      [&](MessageType type, std::uint64_t to) {
        Header h = aead_appendix_header(type, to, ++counter[to],
                                        to == 0 ? "srup/t/00000000000000a1"
                                                : "srup/k/00000000000000c2");
        h.timestamp_ms = now;
        return h;
      },
      {}, {Bytes(32, 0x0c), Bytes(64, 0x0b), {}});
  const auto keys = sender.set_readers(readers, now);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].wire.size(), 1298u);
  EXPECT_EQ(hex(ByteView(keys[0].wire).first(60)),
            "535250510133060100000000000000a100000000000000c20000000000000001000001a0c4506c0000"
            "00ea60b32d95b1b4159b9303746f6b0038df1d");
  EXPECT_EQ(hex(crypto::sha256(keys[0].wire)),
            "fa89a8b73302cc4a8d3730abe005ff06289eb5782299cde3748771d146fd5893");
  // A reading: measured at the header's time, one channel, 0x0101 (voltage L1) = float32 230.1.
  const Bytes reading = crypto::from_hex("000001a0c4506c000101010a4366199a");
  const auto sealed = sender.seal(reading, now);
  ASSERT_EQ(sealed.size(), 1u);
  EXPECT_EQ(hex(sealed[0].wire),
            "535250510130060300000000000000a100000000000000000000000000000001000001a0c4506c0000"
            "00ea603551dc94c1acf15b03746f6b0020000000019874710d74f6bd0ea00a4d91bc357483f83924da"
            "d81a34bb15ec1251903ecc37");
  // Section 5.1 from the primitives: HKDF-Expand(TK, "sruppq1 telemetry"), nonce 74 00 00 00 ‖ 1.
  const crypto::SecretBytes key = expand(Bytes(32, 0x0c), "sruppq1 telemetry");
  EXPECT_EQ(hex(ByteView(sealed[0].wire).subspan(62)),
            hex(crypto::aes_gcm_encrypt(key, crypto::from_hex("740000000000000000000001"),
                                        ByteView(sealed[0].wire).first(58), reading)));
  now += 60'000;
  const auto checkpoint = sender.tick(now);
  ASSERT_EQ(checkpoint.size(), 1u);
  EXPECT_EQ(hex(checkpoint[0].wire),
            "535250510135060000000000000000a100000000000000000000000000000002000001a0c451566000"
            "00ea603551dc94c1acf15b03746f6b002e000000010000000000000001000185bb2a892f343c5cbf64"
            "5ea24d2a24ebfd180fd2d4fc39521ddfeff94603142d3fa5ca8dbdd0b411f7445c3f7866b75d7a1470"
            "96e1df3a4ea341e06ed42b6cca425f095e3aed9837fe5b8094c9f6cbac4ff0369d10fa9ce3987d22be"
            "5897b70e");
  // Its digest: SHA-256 over the SHA-256 of the one covered envelope.
  const auto inner = crypto::sha256(sealed[0].wire);
  EXPECT_EQ(hex(ByteView(checkpoint[0].wire).subspan(58 + 14, 32)), hex(crypto::sha256(inner)));
}

}  // namespace
}  // namespace pqot::srup
