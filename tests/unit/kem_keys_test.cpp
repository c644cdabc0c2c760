// Prepared KEM keys (include/pqot/crypto/kem_keys.hpp): for every KEM, an EncapsulationKey makes
// the ciphertexts and secrets Kem::encapsulate makes with the key's bytes, a DecapsulationKey
// recovers what Kem::decapsulate recovers (the implicit-rejection secret for a wrong ciphertext
// too), and a key another KEM or of the other kind prepared is refused.
#include "pqot/crypto/kem_keys.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::crypto {
namespace {

class KemKeysTest : public ::testing::TestWithParam<std::string_view> {};

TEST_P(KemKeysTest, EncapsulatesAndDecapsulatesAsTheKeyBytesDo) {
  const Kem& kem = kem_by_name(GetParam());
  const KemKeyPair kp = kem.generate_keypair();
  const EncapsulationKey ek(kem, kp.public_key);
  const DecapsulationKey dk(kem, kp.secret_key);
  ASSERT_TRUE(ek);
  ASSERT_TRUE(dk);
  EXPECT_EQ(&ek.kem(), &kem);
  for (int round = 0; round < 4; ++round) {
    Bytes seed(kem.encaps_seed_size());
    random_bytes(seed);
    const KemEncapsulation prepared = ek.encapsulate(seed);
    const KemEncapsulation plain = kem.encapsulate(kp.public_key, seed);
    EXPECT_EQ(prepared.ciphertext, plain.ciphertext);
    EXPECT_EQ(prepared.shared_secret, plain.shared_secret);
    EXPECT_EQ(dk.decapsulate(prepared.ciphertext), prepared.shared_secret);
    // A wrong ciphertext: the same (implicit-rejection) secret both ways, not the real one.
    Bytes tampered = prepared.ciphertext;
    tampered[static_cast<std::size_t>(round) * 7 % tampered.size()] ^= 0x40;
    const SecretBytes rejected = dk.decapsulate(tampered);
    EXPECT_EQ(rejected, kem.decapsulate(kp.secret_key, tampered));
    EXPECT_NE(rejected, prepared.shared_secret);
  }
  const KemEncapsulation fresh = ek.encapsulate();  // random seed
  EXPECT_EQ(dk.decapsulate(fresh.ciphertext), fresh.shared_secret);
  EXPECT_THROW((void)dk.decapsulate(ByteView(fresh.ciphertext).first(fresh.ciphertext.size() - 1)),
               Error);
}

TEST_P(KemKeysTest, RefusesBadKeysAndKeysOfTheOtherKindOrKem) {
  const Kem& kem = kem_by_name(GetParam());
  const KemKeyPair kp = kem.generate_keypair();
  EXPECT_THROW(EncapsulationKey(kem, ByteView(kp.public_key).first(kp.public_key.size() - 1)), Error);
  EXPECT_THROW(DecapsulationKey(kem, ByteView(kp.secret_key).first(kp.secret_key.size() - 1)), Error);
  const auto pub = kem.prepare_public_key(kp.public_key);
  const auto sec = kem.prepare_secret_key(kp.secret_key);
  const Bytes seed(kem.encaps_seed_size(), 1);
  const Bytes ct = kem.encapsulate_prepared(*pub, seed).ciphertext;
  auto expect_invalid_argument = [](const std::function<void()>& f, const char* what) {
    try {
      f();
      ADD_FAILURE() << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << what;
    }
  };
  expect_invalid_argument([&] { (void)kem.encapsulate_prepared(*sec, seed); }, "encapsulated to a secret key");
  expect_invalid_argument([&] { (void)kem.decapsulate_prepared(*pub, ct); }, "decapsulated with a public key");
  const Kem& other = kem_by_name(GetParam() == "ML-KEM-512" ? "ML-KEM-768" : "ML-KEM-512");
  const auto foreign = other.prepare_public_key(other.generate_keypair().public_key);
  expect_invalid_argument([&] { (void)kem.encapsulate_prepared(*foreign, seed); }, "another KEM's key");
}

INSTANTIATE_TEST_SUITE_P(EveryKem, KemKeysTest, ::testing::ValuesIn(kem_names()),
                         [](const auto& info) {
                           std::string n(info.param);
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

TEST(KemKeys, EmptyKeysSayWhatIsWrong) {
  EXPECT_FALSE(EncapsulationKey{});
  EXPECT_FALSE(DecapsulationKey{});
  EXPECT_THROW((void)EncapsulationKey{}.encapsulate(), std::logic_error);
  EXPECT_THROW((void)DecapsulationKey{}.decapsulate(Bytes{1}), std::logic_error);
}

}  // namespace
}  // namespace pqot::crypto
