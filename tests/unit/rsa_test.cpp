// RSA beyond the vectors (RFC 8017): round trips for every suite, the key checks of the API edge
// (sizes, suites, malformed and non-canonical DER, exponents), tampering, contexts, determinism
// of PKCS#1 v1.5 and its absence for PSS, and OAEP labels, length limits and garbage.
#include "pqot/crypto/rsa.hpp"

#include <gtest/gtest.h>
#include <openssl/err.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>

#include "pqot/crypto/error.hpp"
#include "../support/der_builder.hpp"
#include "pqot/crypto/key_file.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::crypto {

// For gtest's parameter names (found by argument-dependent lookup, so outside the anonymous one).
void PrintTo(RsaSignaturePadding padding, std::ostream* os) {
  *os << (padding == RsaSignaturePadding::pss ? "PSS" : "PKCS#1 v1.5");
}

namespace {

static_assert(std::is_same_v<decltype(RsaKeyPair::secret_key), SecretBytes>,
              "RSA secret keys must be wiped when dropped");

// Generated once: RSA key generation costs tens of milliseconds (2048) to seconds (3072).
const RsaKeyPair& key2048() {
  static const RsaKeyPair k = RsaOaep(RsaModulus::rsa_2048).keygen();
  return k;
}
const RsaKeyPair& other_key2048() {
  static const RsaKeyPair k = RsaOaep(RsaModulus::rsa_2048).keygen();
  return k;
}
const RsaKeyPair& key3072() {
  static const RsaKeyPair k = RsaOaep(RsaModulus::rsa_3072).keygen();
  return k;
}

// The ErrorCode f throws, or nothing.
template <class F>
std::optional<ErrorCode> error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return std::nullopt;
}

// DER by hand (tests/support/der_builder.hpp), so the key checks see inputs OpenSSL would never
// produce.
using ::pqot::test::cat;
using ::pqot::test::tlv;
// SPKI { { rsaEncryption, NULL }, BIT STRING { SEQUENCE { INTEGER n, INTEGER e } } } with the
// INTEGER contents given as they are to be encoded (RFC 8017 A.1.1, RFC 5280 4.1).
Bytes spki(const Bytes& n, const Bytes& e) {
  const Bytes oid = {0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01};
  const Bytes algorithm = tlv(0x30, cat(oid, {0x05, 0x00}));
  const Bytes rsa_public_key = tlv(0x30, cat(tlv(0x02, n), tlv(0x02, e)));
  return tlv(0x30, cat(algorithm, tlv(0x03, cat({0x00}, rsa_public_key))));
}
// A modulus INTEGER of `bits` bits, odd, all ones (not a product of primes, but no public-key
// check can tell), with the leading zero DER needs when the top bit is set.
Bytes modulus(int bits) {
  Bytes n(static_cast<std::size_t>(bits + 7) / 8, 0xff);
  if (bits % 8 != 0) n[0] = static_cast<std::uint8_t>((1u << (bits % 8)) - 1);
  if (n[0] & 0x80) n.insert(n.begin(), 0x00);
  return n;
}
const Bytes kE65537 = {0x01, 0x00, 0x01};

// ---- the registry and the sizes -----------------------------------------------------------------

TEST(Rsa, RegistryHasSixLegacySuitesLastAndNoneByDefault) {
  const std::string names[] = {"RSA-2048-PKCS1", "RSA-2048-PSS",   "RSA-3072-PKCS1",
                               "RSA-3072-PSS",   "RSA-7680-PKCS1", "RSA-7680-PSS"};
  const auto all = signature_names();
  ASSERT_GE(all.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(all[all.size() - 6 + i], names[i]);
    const Signature& s = signature_by_name(names[i]);
    EXPECT_EQ(s.name(), names[i]);
    EXPECT_TRUE(s.legacy());
    EXPECT_EQ(s.has_deterministic_signing(), names[i].ends_with("PKCS1"));
    for (auto d : default_signature_names()) EXPECT_NE(d, names[i]);
  }
  for (std::size_t i = 0; i + 6 < all.size(); ++i) {
    EXPECT_FALSE(signature_by_name(all[i]).legacy()) << all[i] << " listed among the RSA names";
  }
}

TEST(Rsa, SizesFollowTheModulus) {
  const RsaModulus moduli[] = {RsaModulus::rsa_2048, RsaModulus::rsa_3072, RsaModulus::rsa_7680};
  for (const RsaModulus m : moduli) {
    const int bits = static_cast<int>(m);
    const RsaSignature s(m, RsaSignaturePadding::pss);
    const RsaOaep oaep(m);
    EXPECT_EQ(s.signature_size(), static_cast<std::size_t>(bits / 8));
    EXPECT_EQ(oaep.ciphertext_size(), static_cast<std::size_t>(bits / 8));
    EXPECT_EQ(oaep.max_plaintext_size(), static_cast<std::size_t>(bits / 8 - 2 * 32 - 2));
    EXPECT_EQ(s.secret_key_size(), 0u);
    EXPECT_EQ(s.seed_size(), 0u);
    EXPECT_EQ(s.rnd_size(), 0u);
    EXPECT_EQ(s.max_context_size(), 0u);
    // An SPKI built independently, by hand, with e = 65537 has public_key_size() bytes and passes.
    const Bytes pk = spki(modulus(bits), kE65537);
    EXPECT_EQ(pk.size(), s.public_key_size());
    EXPECT_EQ(oaep.public_key_size(), s.public_key_size());
    EXPECT_NO_THROW(s.check_public_key(pk));
  }
  // Wycheproof's 2048-bit keys (e = 65537) are 294 bytes: 30 82 01 22 ...
  EXPECT_EQ(rsa_spki_size(RsaModulus::rsa_2048), 294u);
}

// ---- signatures ---------------------------------------------------------------------------------

class RsaSignature2048 : public ::testing::TestWithParam<RsaSignaturePadding> {
 protected:
  RsaSignature rsa{RsaModulus::rsa_2048, GetParam()};
  const RsaKeyPair& kp = key2048();
  const Bytes msg = {'s', 'r', 'u', 'p', '-', 'p', 'q'};
};

TEST_P(RsaSignature2048, RoundTripWithGeneratedKey) {
  const auto fresh = rsa.keygen();
  EXPECT_EQ(fresh.public_key.size(), rsa.public_key_size());
  EXPECT_NO_THROW(rsa.check_public_key(fresh.public_key));
  const Bytes sig = rsa.sign(fresh.secret_key, msg);
  EXPECT_EQ(sig.size(), rsa.signature_size());
  EXPECT_TRUE(rsa.verify(fresh.public_key, msg, {}, sig));
  EXPECT_FALSE(rsa.verify(kp.public_key, msg, {}, sig)) << "verified under another key";
  const Bytes empty_sig = rsa.sign(fresh.secret_key, {});
  EXPECT_TRUE(rsa.verify(fresh.public_key, {}, {}, empty_sig));
}

TEST_P(RsaSignature2048, TamperedSignaturesAndMessagesFail) {
  const Bytes sig = rsa.sign(kp.secret_key, msg);
  ASSERT_TRUE(rsa.verify(kp.public_key, msg, {}, sig));
  for (const std::size_t i : {std::size_t{0}, std::size_t{1}, sig.size() / 2, sig.size() - 1}) {
    Bytes bad = sig;
    bad[i] ^= 0x01;
    EXPECT_FALSE(rsa.verify(kp.public_key, msg, {}, bad)) << "bit flipped in byte " << i;
  }
  Bytes bad_msg = msg;
  bad_msg.back() ^= 0x80;
  EXPECT_FALSE(rsa.verify(kp.public_key, bad_msg, {}, sig));
  EXPECT_FALSE(rsa.verify(kp.public_key, {}, {}, sig));
  // Wrong lengths give false, never an exception (section 8.1.2 / 8.2.2 step 1).
  EXPECT_FALSE(rsa.verify(kp.public_key, msg, {}, {}));
  EXPECT_FALSE(rsa.verify(kp.public_key, msg, {}, Bytes(sig.begin(), sig.end() - 1)));
  EXPECT_FALSE(rsa.verify(kp.public_key, msg, {}, cat(sig, {0x00})));
  EXPECT_FALSE(rsa.verify(kp.public_key, msg, {}, cat({0x00}, sig)));
  // Representatives not below n (section 5.2.2 step 1): n itself is below 0xff..ff.
  EXPECT_FALSE(rsa.verify(kp.public_key, msg, {}, Bytes(sig.size(), 0xff)));
  EXPECT_FALSE(rsa.verify(kp.public_key, msg, {}, Bytes(sig.size(), 0x00)));
  // A failed verify leaves nothing behind: OpenSSL's error queue of this thread is empty (a stale
  // entry would be blamed on the next unrelated failure) and the next good one still succeeds.
  EXPECT_EQ(ERR_peek_error(), 0ul);
  EXPECT_TRUE(rsa.verify(kp.public_key, msg, {}, sig));
}

TEST_P(RsaSignature2048, ContextRndAndSeedRefused) {
  const Bytes ctx = {'c'};
  EXPECT_EQ(error_of([&] { (void)rsa.sign(kp.secret_key, msg, ctx); }),
            ErrorCode::invalid_argument);
  const Bytes sig = rsa.sign(kp.secret_key, msg);
  EXPECT_EQ(error_of([&] { (void)rsa.verify(kp.public_key, msg, ctx, sig); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(error_of([&] { (void)rsa.sign(kp.secret_key, msg, {}, Bytes(32, 0)); }),
            ErrorCode::invalid_length);
  for (const std::size_t n : {0, 32}) {
    try {
      (void)rsa.keygen(Bytes(n, 7));
      ADD_FAILURE() << "keygen(seed) returned";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_EQ(std::string(e.what()), "RSA keys cannot be derived from a seed");
    }
  }
}

TEST_P(RsaSignature2048, KeysOfOtherSizesRefused) {
  const Bytes sig = rsa.sign(kp.secret_key, msg);
  const RsaKeyPair& big = key3072();
  EXPECT_EQ(error_of([&] { rsa.check_public_key(big.public_key); }), ErrorCode::invalid_key);
  EXPECT_EQ(error_of([&] { (void)rsa.verify(big.public_key, msg, {}, sig); }),
            ErrorCode::invalid_key);
  EXPECT_EQ(error_of([&] { (void)rsa.sign(big.secret_key, msg); }), ErrorCode::invalid_key);
  // And the other way: a 2048-bit key in a 3072-bit suite.
  const RsaSignature rsa3072(RsaModulus::rsa_3072, GetParam());
  EXPECT_EQ(error_of([&] { rsa3072.check_public_key(kp.public_key); }), ErrorCode::invalid_key);
  EXPECT_EQ(error_of([&] { (void)rsa3072.sign(kp.secret_key, msg); }), ErrorCode::invalid_key);
  // One bit short of the suite's size.
  EXPECT_EQ(error_of([&] { rsa.check_public_key(spki(modulus(2047), kE65537)); }),
            ErrorCode::invalid_key);
}

TEST_P(RsaSignature2048, MalformedKeysRefused) {
  const Bytes& pk = kp.public_key;
  const Bytes sk(kp.secret_key.begin(), kp.secret_key.end());
  const Bytes sig = rsa.sign(kp.secret_key, msg);
  const Bytes bad_public[] = {
      {},
      Bytes(pk.begin(), pk.end() - 1),            // truncated
      cat(pk, {0x00}),                            // trailing byte
      sk,                                         // a secret key where the public key belongs
      spki(cat({0x00}, modulus(2048)), kE65537),  // INTEGER with a superfluous leading zero
      spki(modulus(2048), {0x01}),                // e = 1
      spki(modulus(2048), {0x02}),                // e even
      spki(modulus(2048), {0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01}),  // 65 bits
      // Ed25519 SPKI (RFC 8410): a well-formed key of another algorithm.
      from_hex("302a300506032b65700321007d4d0e7f6153a69b6242b522abbee685fda4420f8834b108c3bdae369ef"
               "549fa"),
  };
  for (const Bytes& bad : bad_public) {
    SCOPED_TRACE(to_hex(Bytes(bad.begin(), bad.begin() + std::min<std::size_t>(bad.size(), 16))));
    EXPECT_EQ(error_of([&] { rsa.check_public_key(bad); }), ErrorCode::invalid_key);
    EXPECT_EQ(error_of([&] { (void)rsa.verify(bad, msg, {}, sig); }), ErrorCode::invalid_key);
  }
  Bytes even = modulus(2048);
  even.back() = 0xfe;
  EXPECT_EQ(error_of([&] { rsa.check_public_key(spki(even, kE65537)); }), ErrorCode::invalid_key);
  // A key file holding such a key is refused by the same rules, not only when it is used.
  for (const Bytes& bad :
       {spki(modulus(2048), {0x01}), spki(modulus(2048), {0x02}), spki(even, kE65537)}) {
    EXPECT_EQ(error_of([&] { (void)decode_public_key(bad); }), ErrorCode::invalid_key);
    EXPECT_EQ(error_of([&] { (void)decode_public_key(bad, &rsa); }), ErrorCode::invalid_key);
  }
  // The same key with a long-form length where DER requires the short one (BER, not DER).
  Bytes ber = {0x30, 0x83, 0x00};
  ber.insert(ber.end(), pk.begin() + 2, pk.end());
  EXPECT_EQ(error_of([&] { rsa.check_public_key(ber); }), ErrorCode::invalid_key);

  const Bytes bad_secret[] = {{}, Bytes(sk.begin(), sk.end() - 1), cat(sk, {0x00}), pk};
  for (const Bytes& bad : bad_secret) {
    EXPECT_EQ(error_of([&] { (void)rsa.sign(bad, msg); }), ErrorCode::invalid_key);
  }
  EXPECT_EQ(ERR_peek_error(), 0ul) << "a refused key left OpenSSL errors queued";
}

TEST_P(RsaSignature2048, OtherPaddingDoesNotVerify) {
  const RsaSignaturePadding other = GetParam() == RsaSignaturePadding::pss
                                        ? RsaSignaturePadding::pkcs1_v1_5
                                        : RsaSignaturePadding::pss;
  const RsaSignature rsa_other(RsaModulus::rsa_2048, other);
  const Bytes sig = rsa.sign(kp.secret_key, msg);
  EXPECT_TRUE(rsa.verify(kp.public_key, msg, {}, sig));
  EXPECT_FALSE(rsa_other.verify(kp.public_key, msg, {}, sig));
}

INSTANTIATE_TEST_SUITE_P(, RsaSignature2048,
                         ::testing::Values(RsaSignaturePadding::pkcs1_v1_5,
                                           RsaSignaturePadding::pss),
                         [](const auto& info) {
                           return info.param == RsaSignaturePadding::pss ? "Pss" : "Pkcs1";
                         });

TEST(Rsa, Pkcs1SignaturesAreDeterministic) {
  const Signature& rsa = signature_by_name("RSA-2048-PKCS1");
  const Bytes msg = {'m'};
  const Bytes a = rsa.sign(key2048().secret_key, msg);
  EXPECT_EQ(a, rsa.sign(key2048().secret_key, msg));
  EXPECT_EQ(a, rsa.sign_deterministic(key2048().secret_key, msg));
  EXPECT_NE(a, rsa.sign(key2048().secret_key, Bytes{'n'}));
}

TEST(Rsa, PssSignaturesAreRandomizedAndHaveNoDeterministicMode) {
  const Signature& rsa = signature_by_name("RSA-2048-PSS");
  EXPECT_FALSE(rsa.has_deterministic_signing());
  const Bytes msg = {'m'};
  const Bytes a = rsa.sign(key2048().secret_key, msg);
  const Bytes b = rsa.sign(key2048().secret_key, msg);
  EXPECT_NE(a, b) << "two PSS signatures with the same 32-byte salt";
  EXPECT_TRUE(rsa.verify(key2048().public_key, msg, {}, a));
  EXPECT_TRUE(rsa.verify(key2048().public_key, msg, {}, b));
  EXPECT_EQ(error_of([&] { (void)rsa.sign_deterministic(key2048().secret_key, msg); }),
            ErrorCode::invalid_argument);
}

// ---- OAEP ---------------------------------------------------------------------------------------

TEST(RsaOaep, RoundTripWithAndWithoutLabel) {
  const RsaOaep& oaep = rsa_oaep_by_name("RSA-2048-OAEP");
  EXPECT_EQ(oaep.name(), "RSA-2048-OAEP");
  const RsaKeyPair& kp = key2048();
  const Bytes msg = {'p', 'a', 'y', 'l', 'o', 'a', 'd'};
  const Bytes label = {'s', 'r', 'u', 'p'};
  const Bytes ct = oaep.encrypt(kp.public_key, msg);
  EXPECT_EQ(ct.size(), oaep.ciphertext_size());
  EXPECT_NE(ct, oaep.encrypt(kp.public_key, msg)) << "OAEP seed not random";
  const auto plain = oaep.decrypt(kp.secret_key, ct);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(Bytes(plain->begin(), plain->end()), msg);

  const Bytes ct_l = oaep.encrypt(kp.public_key, msg, label);
  const auto plain_l = oaep.decrypt(kp.secret_key, ct_l, label);
  ASSERT_TRUE(plain_l.has_value());
  EXPECT_EQ(Bytes(plain_l->begin(), plain_l->end()), msg);
  // The label is bound (section 7.1.2 step 3g): a different or missing one fails, and so does
  // adding one that was not used.
  EXPECT_FALSE(oaep.decrypt(kp.secret_key, ct_l, Bytes{'s', 'r', 'u', 'q'}).has_value());
  EXPECT_FALSE(oaep.decrypt(kp.secret_key, ct_l).has_value());
  EXPECT_FALSE(oaep.decrypt(kp.secret_key, ct, label).has_value());
  // Another key of the same size: nullopt, not an exception.
  EXPECT_FALSE(oaep.decrypt(other_key2048().secret_key, ct).has_value());
}

TEST(RsaOaep, MaxPlaintextEnforced) {
  const RsaOaep oaep(RsaModulus::rsa_2048);
  const RsaKeyPair& kp = key2048();
  Bytes longest(oaep.max_plaintext_size());
  random_bytes(longest);
  const auto back = oaep.decrypt(kp.secret_key, oaep.encrypt(kp.public_key, longest));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(Bytes(back->begin(), back->end()), longest);
  const auto empty = oaep.decrypt(kp.secret_key, oaep.encrypt(kp.public_key, {}));
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
  EXPECT_EQ(error_of([&] { (void)oaep.encrypt(kp.public_key, cat(longest, {0x00})); }),
            ErrorCode::invalid_length);
}

TEST(RsaOaep, GarbageCiphertextGivesNullopt) {
  const RsaOaep oaep(RsaModulus::rsa_2048);
  const RsaKeyPair& kp = key2048();
  const Bytes ct = oaep.encrypt(kp.public_key, Bytes{'x'});
  for (const std::size_t i : {std::size_t{0}, std::size_t{1}, ct.size() / 2, ct.size() - 1}) {
    Bytes bad = ct;
    bad[i] ^= 0x04;
    EXPECT_FALSE(oaep.decrypt(kp.secret_key, bad).has_value()) << "byte " << i;
  }
  for (int i = 0; i < 20; ++i) {
    Bytes random(ct.size());
    random_bytes(random);
    EXPECT_FALSE(oaep.decrypt(kp.secret_key, random).has_value());
  }
  EXPECT_FALSE(oaep.decrypt(kp.secret_key, {}).has_value());
  EXPECT_FALSE(oaep.decrypt(kp.secret_key, Bytes(ct.begin(), ct.end() - 1)).has_value());
  EXPECT_FALSE(oaep.decrypt(kp.secret_key, cat({0x00}, ct)).has_value());
  EXPECT_FALSE(oaep.decrypt(kp.secret_key, Bytes(ct.size(), 0xff)).has_value());  // not below n
  EXPECT_FALSE(oaep.decrypt(kp.secret_key, Bytes(ct.size(), 0x00)).has_value());
  // Still works afterwards: no failure left anything behind.
  EXPECT_EQ(ERR_peek_error(), 0ul);
  EXPECT_TRUE(oaep.decrypt(kp.secret_key, ct).has_value());
}

TEST(RsaOaep, KeysOfOtherSizesAndMalformedKeysRefused) {
  const RsaOaep oaep(RsaModulus::rsa_2048);
  const RsaKeyPair& big = key3072();
  const Bytes ct = oaep.encrypt(key2048().public_key, Bytes{'x'});
  EXPECT_EQ(error_of([&] { (void)oaep.encrypt(big.public_key, Bytes{'x'}); }),
            ErrorCode::invalid_key);
  EXPECT_EQ(error_of([&] { (void)oaep.decrypt(big.secret_key, ct); }), ErrorCode::invalid_key);
  EXPECT_EQ(error_of([&] { oaep.check_public_key(big.public_key); }), ErrorCode::invalid_key);
  EXPECT_EQ(error_of([&] { (void)oaep.decrypt(Bytes{0x30, 0x00}, ct); }), ErrorCode::invalid_key);
  EXPECT_EQ(error_of([&] { (void)oaep.decrypt(key2048().public_key, ct); }),
            ErrorCode::invalid_key);
  EXPECT_EQ(error_of([&] { (void)rsa_oaep_by_name("RSA-1024-OAEP"); }),
            ErrorCode::unknown_algorithm);
}

// Prepared keys (imported once): the same results as the byte-key calls, and a key of another
// modulus or kind refused.
TEST(RsaOaep, PreparedKeysRoundTripAndInteroperateWithByteKeys) {
  const RsaOaep& oaep = rsa_oaep_by_name("RSA-2048-OAEP");
  const RsaKeyPair& kp = key2048();
  const RsaOaepKey pub = oaep.prepare_public_key(kp.public_key);
  const RsaOaepKey sec = oaep.prepare_secret_key(kp.secret_key);
  EXPECT_FALSE(pub.secret());
  EXPECT_TRUE(sec.secret());
  EXPECT_EQ(pub.modulus(), RsaModulus::rsa_2048);
  const Bytes msg = {'m', 'e', 't', 'e', 'r'};
  const Bytes label = {'l'};
  for (const Bytes& ct : {oaep.encrypt(pub, msg, label), oaep.encrypt(sec, msg, label)}) {
    const auto by_bytes = oaep.decrypt(kp.secret_key, ct, label);
    const auto prepared = oaep.decrypt(sec, ct, label);
    ASSERT_TRUE(by_bytes.has_value());
    ASSERT_TRUE(prepared.has_value());
    EXPECT_EQ(Bytes(prepared->begin(), prepared->end()), msg);
    EXPECT_FALSE(oaep.decrypt(sec, ct).has_value()) << "label not bound";
  }
  const auto back = oaep.decrypt(sec, oaep.encrypt(kp.public_key, msg));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(Bytes(back->begin(), back->end()), msg);
  EXPECT_FALSE(oaep.decrypt(sec, Bytes(oaep.ciphertext_size() - 1)).has_value());
  EXPECT_EQ(error_of([&] { (void)oaep.encrypt(pub, Bytes(oaep.max_plaintext_size() + 1)); }),
            ErrorCode::invalid_length);
}

TEST(RsaOaep, PreparedKeysOfAnotherModulusOrKindRefused) {
  const RsaOaep& oaep2048 = rsa_oaep_by_name("RSA-2048-OAEP");
  const RsaOaep& oaep3072 = rsa_oaep_by_name("RSA-3072-OAEP");
  const RsaOaepKey pub = oaep2048.prepare_public_key(key2048().public_key);
  const RsaOaepKey sec = oaep2048.prepare_secret_key(key2048().secret_key);
  const Bytes ct = oaep2048.encrypt(pub, Bytes{'x'});
  EXPECT_EQ(error_of([&] { (void)oaep2048.decrypt(pub, ct); }), ErrorCode::invalid_argument);
  EXPECT_EQ(error_of([&] { (void)oaep3072.encrypt(pub, Bytes{'x'}); }), ErrorCode::invalid_argument);
  EXPECT_EQ(error_of([&] { (void)oaep3072.decrypt(sec, ct); }), ErrorCode::invalid_argument);
  EXPECT_EQ(error_of([&] { (void)oaep2048.prepare_public_key(key3072().public_key); }), ErrorCode::invalid_key);
  EXPECT_EQ(error_of([&] { (void)oaep2048.prepare_secret_key(key2048().public_key); }), ErrorCode::invalid_key);
  EXPECT_EQ(error_of([&] { (void)oaep2048.prepare_public_key(Bytes{0x30, 0x00}); }), ErrorCode::invalid_key);
}

// ---- the larger moduli: one key each, every scheme ----------------------------------------------

void round_trip_all(RsaModulus m, const RsaKeyPair& kp) {
  const Bytes msg = {'l', 'a', 'r', 'g', 'e'};
  for (const auto padding : {RsaSignaturePadding::pkcs1_v1_5, RsaSignaturePadding::pss}) {
    const RsaSignature rsa(m, padding);
    SCOPED_TRACE(std::string(rsa.name()));
    EXPECT_EQ(kp.public_key.size(), rsa.public_key_size());
    const Bytes sig = rsa.sign(kp.secret_key, msg);
    EXPECT_EQ(sig.size(), rsa.signature_size());
    EXPECT_TRUE(rsa.verify(kp.public_key, msg, {}, sig));
    Bytes bad = sig;
    bad[bad.size() / 3] ^= 0x10;
    EXPECT_FALSE(rsa.verify(kp.public_key, msg, {}, bad));
  }
  const RsaOaep oaep(m);
  Bytes longest(oaep.max_plaintext_size());
  random_bytes(longest);
  const auto back = oaep.decrypt(kp.secret_key, oaep.encrypt(kp.public_key, longest, msg), msg);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(Bytes(back->begin(), back->end()), longest);
}

TEST(Rsa, RoundTrips3072) {
  round_trip_all(RsaModulus::rsa_3072, key3072());
}

// A 7680-bit key takes 10-55 s to generate under the sanitizers (CI time): this test reads the
// stored one (tests/data/rsa/README.md). Key generation itself is the same code for every size
// and is tested at 2048 and 3072 bits above.
TEST(Rsa, RoundTrips7680) {
  const std::string path = std::string(PQOT_TEST_DATA_DIR) + "/rsa/rsa7680-a.p8.der";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing test key " << path;
  const Bytes der((std::istreambuf_iterator<char>(in)), {});
  const RsaKeyPair kp = decode_private_key(der, &signature_by_name("RSA-7680-PKCS1")).keys;
  round_trip_all(RsaModulus::rsa_7680, kp);
  EXPECT_EQ(error_of([&] { signature_by_name("RSA-2048-PSS").check_public_key(kp.public_key); }),
            ErrorCode::invalid_key);
}

}  // namespace
}  // namespace pqot::crypto
