// The known-answer vectors of docs/srup-pq.md, Appendix A: fixed keys, KEM seed and signing
// randomness give exactly these bytes, so a second implementation can check itself against them
// and any change to the format shows here.
#include <gtest/gtest.h>

#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/protect.hpp"

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

}  // namespace
}  // namespace pqot::srup
