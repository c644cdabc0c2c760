// The Signature interface and registry: every registered scheme round-trips, refuses what it must
// (tampered signatures, messages and contexts; wrong sizes) and reports sizes that match what it
// produces. Scheme-specific behaviour is in mldsa_test, ed25519_test, hybrid_signature_test.
#include "pqot/crypto/signature.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <map>
#include <utility>
#include <string>

#include "../support/crypto_error.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/key_file.hpp"

namespace pqot::crypto {
namespace {

using test::code_of;

// Two key pairs per scheme, made once per process. RSA keys come from tests/data/rsa/ (each CTest
// entry is its own process, and a 7680-bit key takes 10-55 s to generate; rsa_test.cpp tests
// RSA key generation itself).
SignatureKeyPair rsa_test_key(const Signature& alg, int which) {
  const std::string path = std::string(PQOT_TEST_DATA_DIR) + "/rsa/rsa" +
                           std::to_string(alg.signature_size() * 8) + (which == 0 ? "-a" : "-b") +
                           ".p8.der";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("missing test key " + path);
  const Bytes der((std::istreambuf_iterator<char>(in)), {});
  return decode_private_key(der, &alg).keys;
}

const SignatureKeyPair& key_pair(const Signature& alg, int which) {
  static std::map<std::pair<std::string_view, int>, SignatureKeyPair> cache;
  auto [it, fresh] = cache.try_emplace({alg.name(), which});
  if (fresh) it->second = alg.legacy() ? rsa_test_key(alg, which) : alg.keygen();
  return it->second;
}

class SignatureSuite : public ::testing::TestWithParam<std::string_view> {
 protected:
  const Signature& alg = signature_by_name(GetParam());
  const Bytes msg = {'s', 'r', 'u', 'p', '-', 'p', 'q'};
  Bytes ctx() const { return alg.max_context_size() > 0 ? Bytes{'c', 't', 'x'} : Bytes{}; }
};

TEST_P(SignatureSuite, NameRoundTripsThroughTheRegistry) {
  EXPECT_EQ(alg.name(), GetParam());
  EXPECT_EQ(&signature_by_name(alg.name()), &alg);
}

TEST_P(SignatureSuite, RoundTripWithSizesAsAdvertised) {
  const auto& kp = key_pair(alg, 0);
  EXPECT_EQ(kp.public_key.size(), alg.public_key_size());
  if (alg.secret_key_size() != 0) {
    EXPECT_EQ(kp.secret_key.size(), alg.secret_key_size());
  }
  EXPECT_NO_THROW(alg.check_public_key(kp.public_key));
  const Bytes sig = alg.sign(kp.secret_key, msg, ctx());
  EXPECT_EQ(sig.size(), alg.signature_size());
  EXPECT_TRUE(alg.verify(kp.public_key, msg, ctx(), sig));
}

TEST_P(SignatureSuite, TamperedSignatureMessageAndContextAreRefused) {
  const auto& kp = key_pair(alg, 0);
  const Bytes sig = alg.sign(kp.secret_key, msg, ctx());
  for (std::size_t pos : {std::size_t{0}, sig.size() / 2, sig.size() - 1}) {
    Bytes bad = sig;
    bad[pos] ^= 0x01;
    EXPECT_FALSE(alg.verify(kp.public_key, msg, ctx(), bad)) << "bit flipped at " << pos;
  }
  Bytes other_msg = msg;
  other_msg.back() ^= 0x80;
  EXPECT_FALSE(alg.verify(kp.public_key, other_msg, ctx(), sig));
  if (alg.max_context_size() > 0) {
    EXPECT_FALSE(alg.verify(kp.public_key, msg, {}, sig));
    EXPECT_FALSE(alg.verify(kp.public_key, msg, Bytes{'c', 't', 'y'}, sig));
  }
  const auto& other = key_pair(alg, 1);
  EXPECT_FALSE(alg.verify(other.public_key, msg, ctx(), sig));
}

TEST_P(SignatureSuite, SignaturesOfTheWrongLengthAreInvalidNotErrors) {
  const auto& kp = key_pair(alg, 0);
  const Bytes sig = alg.sign(kp.secret_key, msg, ctx());
  ASSERT_EQ(sig.size(), alg.signature_size());
  EXPECT_FALSE(alg.verify(kp.public_key, msg, ctx(), {}));
  Bytes longer = sig;
  longer.push_back(0);
  EXPECT_FALSE(alg.verify(kp.public_key, msg, ctx(), longer));
  // One byte short (a view: no resize arithmetic that GCC 12's -Wstringop-overflow misreads).
  EXPECT_FALSE(alg.verify(kp.public_key, msg, ctx(), ByteView(sig).first(sig.size() - 1)));
}

TEST_P(SignatureSuite, WrongSizeKeysAndSeedsAreRefused) {
  const auto& kp = key_pair(alg, 0);
  const Bytes short_pk(kp.public_key.begin(), kp.public_key.end() - 1);
  EXPECT_NE(code_of([&] { (void)alg.verify(short_pk, msg, ctx(), Bytes(alg.signature_size())); }),
            ErrorCode::internal);
  EXPECT_NE(code_of([&] { alg.check_public_key(short_pk); }), ErrorCode::internal);
  const SecretBytes short_sk(kp.secret_key.begin(), kp.secret_key.end() - 1);
  EXPECT_NE(code_of([&] { (void)alg.sign(short_sk, msg, ctx()); }), ErrorCode::internal);
  if (alg.seed_size() > 0) {
    EXPECT_EQ(code_of([&] { (void)alg.keygen(Bytes(alg.seed_size() + 1)); }),
              ErrorCode::invalid_length);
  }
}

TEST_P(SignatureSuite, ContextLimitIsEnforced) {
  const auto& kp = key_pair(alg, 0);
  const Bytes too_long(alg.max_context_size() + 1, 0x5a);
  EXPECT_EQ(code_of([&] { (void)alg.sign(kp.secret_key, msg, too_long); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(code_of([&] {
              (void)alg.verify(kp.public_key, msg, too_long, Bytes(alg.signature_size()));
            }),
            ErrorCode::invalid_argument);
  if (alg.max_context_size() > 0) {
    const Bytes longest(alg.max_context_size(), 0x5a);
    EXPECT_TRUE(alg.verify(kp.public_key, msg, longest, alg.sign(kp.secret_key, msg, longest)));
  }
}

TEST_P(SignatureSuite, SeededKeygenAndDeterministicSigningRepeat) {
  if (alg.seed_size() == 0) GTEST_SKIP() << alg.name() << " has no seeded key generation";
  const Bytes seed(alg.seed_size(), 0x42);
  const auto a = alg.keygen(seed);
  const auto b = alg.keygen(seed);
  EXPECT_EQ(a.public_key, b.public_key);
  EXPECT_TRUE(a.secret_key == b.secret_key);
  Bytes other_seed = seed;
  other_seed.back() ^= 1;
  EXPECT_NE(alg.keygen(other_seed).public_key, a.public_key);
  ASSERT_TRUE(alg.has_deterministic_signing());
  EXPECT_EQ(alg.sign_deterministic(a.secret_key, msg, ctx()),
            alg.sign_deterministic(a.secret_key, msg, ctx()));
  if (alg.rnd_size() > 0) {
    EXPECT_NE(alg.sign(a.secret_key, msg, ctx()), alg.sign(a.secret_key, msg, ctx()))
        << "hedged signing draws fresh randomness";
    const Bytes short_rnd(alg.rnd_size() - 1);
    EXPECT_EQ(code_of([&] { (void)alg.sign(a.secret_key, msg, ctx(), short_rnd); }),
              ErrorCode::invalid_length);
  }
}

INSTANTIATE_TEST_SUITE_P(Registered, SignatureSuite, ::testing::ValuesIn(signature_names()),
                         [](const auto& info) {
                           std::string n(info.param);
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

TEST(SignatureRegistry, UnknownNamesAreRefusedWithTheKnownList) {
  try {
    (void)signature_by_name("ml-dsa-65");
    FAIL() << "names match exactly";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unknown_algorithm);
    EXPECT_NE(std::string(e.what()).find("ML-DSA-65"), std::string::npos);
  }
}

TEST(SignatureRegistry, DefaultsArePostQuantumAndNeverLegacy) {
  ASSERT_FALSE(default_signature_names().empty());
  EXPECT_EQ(default_signature_names().front(), "ML-DSA-65");
  for (auto name : default_signature_names()) {
    const Signature& alg = signature_by_name(name);
    EXPECT_FALSE(alg.legacy()) << name;
    EXPECT_NE(name, "Ed25519") << "not quantum-safe alone";
  }
  for (auto name : signature_names()) {
    if (signature_by_name(name).legacy()) {
      const auto defaults = default_signature_names();
      EXPECT_EQ(std::count(defaults.begin(), defaults.end(), name), 0) << name;
    }
  }
}

}  // namespace
}  // namespace pqot::crypto
