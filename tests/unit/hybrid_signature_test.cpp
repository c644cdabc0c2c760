// ML-DSA-65+Ed25519 (docs/crypto.md, "The hybrid signature"): the message representative is the
// composite draft's, each half is a valid signature of its own scheme over it, and neither half
// alone, nor a half moved to another message, passes.
#include "pqot/crypto/hybrid_signature.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/key_file.hpp"

namespace pqot::crypto {
namespace {

constexpr std::size_t kPqPk = 1952, kPqSig = 3309, kPqSk = 4032;

// The layout of draft-ietf-lamps-pq-composite-sigs, section 4.2: Prefix (the ASCII bytes below,
// written out in hex as the draft's example does) || Label || len(ctx) || ctx || SHA-512(M).
TEST(HybridSignature, MessageRepresentativeFollowsTheDraft) {
  const Bytes msg = from_hex("00010203040506070809");
  const Bytes ctx = from_hex("0813061205162623");
  const Bytes m_prime = MlDsa65Ed25519::message_representative(msg, ctx);
  const std::string expected_start =
      "436f6d706f73697465416c676f726974686d5369676e61747572657332303235"  // Prefix
      + to_hex(as_bytes("COMPSIG-MLDSA65-Ed25519-SHA512")) + "08" + "0813061205162623";
  const auto ph = sha512(msg);
  EXPECT_EQ(to_hex(m_prime), expected_start + to_hex(ph));
  // The draft's example (for the ECDSA-P256 combination) gives this PH(M) for the same M.
  EXPECT_EQ(to_hex(ph),
            "0f89ee1fcb7b0a4f7809d1267a029719004c5a5e5ec323a7c3523a20974f9a3f202f56fadba4cd9e8d654a"
            "b9f2e96dc5c795ea176fa20ede8d854c342f903533");
}

TEST(HybridSignature, EachHalfIsAValidSignatureOfItsComponent) {
  const MlDsa65Ed25519 hybrid;
  const MlDsa ml_dsa(MlDsaParameterSet::ml_dsa_65);
  const Ed25519 ed;
  Bytes seed(64);
  for (std::size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<std::uint8_t>(i);
  const auto kp = hybrid.keygen(seed);
  // The key pair is the two component key pairs side by side.
  const auto pq = ml_dsa.keygen(ByteView(seed).first(32));
  const auto classic = ed.keygen(ByteView(seed).subspan(32));
  EXPECT_EQ(ByteView(kp.public_key).first(kPqPk).size(), pq.public_key.size());
  EXPECT_TRUE(std::equal(pq.public_key.begin(), pq.public_key.end(), kp.public_key.begin()));
  EXPECT_TRUE(std::equal(classic.public_key.begin(), classic.public_key.end(),
                         kp.public_key.begin() + kPqPk));
  EXPECT_TRUE(std::equal(pq.secret_key.begin(), pq.secret_key.end(), kp.secret_key.begin()));

  const Bytes msg = {'o', 'p', 'e', 'n', ' ', 'v', 'a', 'l', 'v', 'e'};
  const Bytes ctx = {'s', 'r', 'u', 'p'};
  const Bytes sig = hybrid.sign_deterministic(kp.secret_key, msg, ctx);
  const Bytes m_prime = MlDsa65Ed25519::message_representative(msg, ctx);
  const ByteView pq_sig = ByteView(sig).first(kPqSig);
  const ByteView ed_sig = ByteView(sig).subspan(kPqSig);
  EXPECT_TRUE(ml_dsa.verify(pq.public_key, m_prime, as_bytes(MlDsa65Ed25519::kLabel), pq_sig));
  EXPECT_TRUE(ed.verify(classic.public_key, m_prime, {}, ed_sig));
  // The ML-DSA half is the deterministic signature under context Label, byte for byte.
  EXPECT_TRUE(std::ranges::equal(
      pq_sig, ml_dsa.sign_deterministic(pq.secret_key, m_prime, as_bytes(MlDsa65Ed25519::kLabel))));
  // The ML-DSA half signs M' under Label, not the bare message or an empty context.
  EXPECT_FALSE(ml_dsa.verify(pq.public_key, msg, ctx, pq_sig));
  EXPECT_FALSE(ml_dsa.verify(pq.public_key, m_prime, {}, pq_sig));
}

TEST(HybridSignature, NeitherHalfAloneNorSplicedHalvesPass) {
  const MlDsa65Ed25519 hybrid;
  const auto kp = hybrid.keygen();
  const Bytes a = {'a'}, b = {'b'};
  const Bytes sig_a = hybrid.sign(kp.secret_key, a);
  const Bytes sig_b = hybrid.sign(kp.secret_key, b);
  ASSERT_TRUE(hybrid.verify(kp.public_key, a, {}, sig_a));
  // ML-DSA half of a with Ed25519 half of b, and the reverse: each fails on one component.
  Bytes spliced = sig_a;
  std::copy(sig_b.begin() + kPqSig, sig_b.end(), spliced.begin() + kPqSig);
  EXPECT_FALSE(hybrid.verify(kp.public_key, a, {}, spliced));
  EXPECT_FALSE(hybrid.verify(kp.public_key, b, {}, spliced));
  // A zeroed half: the other alone does not suffice.
  Bytes no_ed = sig_a;
  std::fill(no_ed.begin() + kPqSig, no_ed.end(), 0);
  EXPECT_FALSE(hybrid.verify(kp.public_key, a, {}, no_ed));
  Bytes no_pq = sig_a;
  std::fill(no_pq.begin(), no_pq.begin() + kPqSig, 0);
  EXPECT_FALSE(hybrid.verify(kp.public_key, a, {}, no_pq));
  // Another key's Ed25519 half in the public key: refused.
  const auto other = hybrid.keygen();
  Bytes mixed_pk = kp.public_key;
  std::copy(other.public_key.begin() + kPqPk, other.public_key.end(), mixed_pk.begin() + kPqPk);
  EXPECT_FALSE(hybrid.verify(mixed_pk, a, {}, sig_a));
  EXPECT_EQ(kp.secret_key.size(), kPqSk + 32);
}

// The IETF LAMPS vectors (tests/data/composite/README.md: draft -19, Appendix E, and an older set):
// our keys from their seeds are theirs byte for byte, their signatures verify here (ML-DSA's
// half is hedged in the draft, so it cannot be reproduced, only verified), and their PKCS#8 files
// read back to the same keys.
void check_lamps_vector(const nlohmann::json& v, bool has_context) {
  const MlDsa65Ed25519 hybrid;
  const Bytes msg = from_hex(v.at("message_hex").get<std::string>());
  const auto kp = hybrid.keygen(from_hex(v.at("sk_hex").get<std::string>()));
  EXPECT_EQ(to_hex(kp.public_key), v.at("pk_hex").get<std::string>());
  const Bytes sig = from_hex(v.at("signature_hex").get<std::string>());
  EXPECT_TRUE(hybrid.verify(kp.public_key, msg, {}, sig));
  Bytes other = msg;
  other[0] ^= 1;
  EXPECT_FALSE(hybrid.verify(kp.public_key, other, {}, sig));
  if (has_context) {
    const Bytes ctx = from_hex(v.at("with_context").at("ctx_hex").get<std::string>());
    const Bytes sig_ctx = from_hex(v.at("with_context").at("signature_hex").get<std::string>());
    EXPECT_TRUE(hybrid.verify(kp.public_key, msg, ctx, sig_ctx));
    EXPECT_FALSE(hybrid.verify(kp.public_key, msg, {}, sig_ctx));
    EXPECT_FALSE(hybrid.verify(kp.public_key, msg, ctx, sig));
  }
  const auto file = decode_private_key(from_hex(v.at("sk_pkcs8_hex").get<std::string>()));
  ASSERT_NE(file.alg, nullptr);
  EXPECT_EQ(file.alg->name(), "ML-DSA-65+Ed25519");
  EXPECT_EQ(file.keys.public_key, kp.public_key);
  EXPECT_EQ(to_hex(encode_private_key_der(hybrid, from_hex(v.at("sk_hex").get<std::string>()))),
            v.at("sk_pkcs8_hex").get<std::string>());
  // The plain ML-DSA-65 key of the same set, in RFC 9881's seed form.
  const auto& pq = v.at("ml_dsa_65");
  const auto pq_file = decode_private_key(from_hex(pq.at("sk_pkcs8_hex").get<std::string>()));
  ASSERT_NE(pq_file.alg, nullptr);
  EXPECT_EQ(pq_file.alg->name(), "ML-DSA-65");
  EXPECT_EQ(to_hex(pq_file.keys.public_key), pq.at("pk_hex").get<std::string>());
}

TEST(HybridSignature, IetfLampsVectorsVerifyAndTheirKeysAreOurs) {
  std::ifstream in(PQOT_TEST_DATA_DIR "/composite/mldsa65_ed25519_sha512.json");
  ASSERT_TRUE(in) << "tests/data/composite/mldsa65_ed25519_sha512.json is missing";
  const auto doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc.at("tcId"), "id-MLDSA65-Ed25519-SHA512");
  {
    SCOPED_TRACE("draft -19, Appendix E");
    check_lamps_vector(doc, true);
  }
  {
    SCOPED_TRACE("older vector set");
    check_lamps_vector(doc.at("previous_vector"), false);
  }
}

}  // namespace
}  // namespace pqot::crypto
