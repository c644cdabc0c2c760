// Prepared keys (include/pqot/crypto/signing_key.hpp): for every scheme, a SigningKey makes the
// very signatures Signature::sign makes with the key's bytes, a VerifyingKey gives the verdicts
// Signature::verify gives, and a key prepared by another scheme or of the other kind is refused.
#include "pqot/crypto/signing_key.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::crypto {
namespace {

// Every scheme but the slow RSA sizes (RSA-2048 stands for them: they share the default path).
std::vector<std::string> prepared_schemes() {
  std::vector<std::string> out;
  for (auto n : signature_names()) {
    const std::string name(n);
    if (name.rfind("RSA-", 0) == 0 && name.rfind("RSA-2048", 0) != 0) continue;
    out.push_back(name);
  }
  return out;
}

// One key pair per scheme for the whole suite (RSA key generation takes seconds).
const SignatureKeyPair& key_pair_of(const Signature& alg) {
  static std::map<std::string, SignatureKeyPair> pairs;
  auto it = pairs.find(std::string(alg.name()));
  if (it == pairs.end()) it = pairs.emplace(std::string(alg.name()), alg.keygen()).first;
  return it->second;
}

class SigningKeyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SigningKeyTest, SignsAndVerifiesAsTheKeyBytesDo) {
  const Signature& alg = signature_by_name(GetParam());
  const SignatureKeyPair& kp = key_pair_of(alg);
  const SigningKey signer(alg, kp.secret_key);
  const VerifyingKey verifier(alg, kp.public_key);
  ASSERT_TRUE(signer);
  ASSERT_TRUE(verifier);
  EXPECT_EQ(&signer.algorithm(), &alg);
  const Bytes ctx = alg.max_context_size() > 0 ? Bytes{1, 2, 3} : Bytes{};
  for (std::size_t len : {0, 1, 64, 1000}) {
    Bytes msg(len);
    random_bytes(msg);
    if (alg.has_deterministic_signing()) {
      // The same randomness gives the same signature byte for byte (ML-DSA: rnd all zero and a
      // random rnd; Ed25519 and PKCS#1 v1.5 are deterministic anyway).
      Bytes rnd(alg.rnd_size(), 0);
      EXPECT_EQ(signer.sign(msg, ctx, rnd), alg.sign(kp.secret_key, msg, ctx, rnd)) << len;
      random_bytes(rnd);
      EXPECT_EQ(signer.sign(msg, ctx, rnd), alg.sign(kp.secret_key, msg, ctx, rnd)) << len;
    }
    const Bytes sig = signer.sign(msg, ctx);  // hedged
    EXPECT_TRUE(alg.verify(kp.public_key, msg, ctx, sig));
    EXPECT_TRUE(verifier.verify(msg, ctx, sig));
    // Every refusal the bytes path gives, the prepared path gives.
    Bytes tampered = sig;
    tampered[tampered.size() / 2] ^= 0x01;
    EXPECT_FALSE(verifier.verify(msg, ctx, tampered));
    EXPECT_FALSE(alg.verify(kp.public_key, msg, ctx, tampered));
    Bytes other = msg;
    other.push_back(0);
    EXPECT_FALSE(verifier.verify(other, ctx, sig));
    EXPECT_FALSE(verifier.verify(msg, ctx, ByteView(sig).first(sig.size() - 1)));
    EXPECT_FALSE(verifier.verify(msg, ctx, {}));
    if (alg.max_context_size() > 0) {
      EXPECT_FALSE(verifier.verify(msg, {}, sig));
    }
  }
}

TEST_P(SigningKeyTest, RefusesWrongSizedKeysAsSignDoes) {
  const Signature& alg = signature_by_name(GetParam());
  if (alg.secret_key_size() != 0) {
    const Bytes short_key(alg.secret_key_size() - 1, 0);
    EXPECT_THROW(SigningKey(alg, short_key), Error);
  }
  const Bytes short_pub(alg.public_key_size() - 1, 0);
  EXPECT_THROW(VerifyingKey(alg, short_pub), Error);
}

TEST_P(SigningKeyTest, RefusesAKeyOfTheOtherKindOrScheme) {
  const Signature& alg = signature_by_name(GetParam());
  const SignatureKeyPair& kp = key_pair_of(alg);
  const auto secret = alg.prepare_secret_key(kp.secret_key);
  const auto pub = alg.prepare_public_key(kp.public_key);
  const Bytes msg{1, 2, 3};
  const Bytes rnd(alg.rnd_size(), 0);
  const Bytes sig = alg.sign_prepared(*secret, msg, {}, rnd.empty() ? ByteView{} : ByteView(rnd));
  try {
    (void)alg.sign_prepared(*pub, msg, {}, rnd);
    ADD_FAILURE() << "signed with a public key";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
  try {
    (void)alg.verify_prepared(*secret, msg, {}, sig);
    ADD_FAILURE() << "verified with a secret key";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
  // A key another scheme prepared (ML-DSA-44's for everyone but ML-DSA-44, which gets ML-DSA-65's).
  const Signature& other = signature_by_name(GetParam() == "ML-DSA-44" ? "ML-DSA-65" : "ML-DSA-44");
  const auto foreign = other.prepare_public_key(other.keygen().public_key);
  try {
    (void)alg.verify_prepared(*foreign, msg, {}, sig);
    ADD_FAILURE() << "verified with another scheme's key";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryScheme, SigningKeyTest, ::testing::ValuesIn(prepared_schemes()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (c == '-' || c == '+') c = '_';
                           }
                           return n;
                         });

TEST(SigningKey, EmptyKeysSayWhatIsWrong) {
  const SigningKey s;
  const VerifyingKey v;
  EXPECT_FALSE(s);
  EXPECT_FALSE(v);
  EXPECT_THROW((void)s.sign(Bytes{1}), std::logic_error);
  EXPECT_THROW((void)v.verify(Bytes{1}, {}, Bytes{1}), std::logic_error);
}

}  // namespace
}  // namespace pqot::crypto
