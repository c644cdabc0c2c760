// ML-KEM behaviour beyond the vectors: the accumulated 10,000-iteration test, input checks,
// implicit rejection, and the KEM registry.
#include <gtest/gtest.h>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/mlkem.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto {
namespace {

Bytes copy(const SecretBytes& s) { return Bytes(s.begin(), s.end()); }

// The BoringSSL/CCTV "accumulated" construction for final FIPS 203 (tests/data/README.md):
// inputs streamed from SHAKE128(""), outputs absorbed into a SHAKE128 accumulator.
TEST(MlKem, Accumulated10000Iterations768) {
  const MlKem kem(MlKemParameterSet::ml_kem_768);
  Shake128 stream;  // absorbs nothing: SHAKE128 of the empty string
  Shake128 acc;
  Bytes seed(64), m(32), reject_ct(kem.ciphertext_size());
  for (int i = 0; i < 10000; ++i) {
    stream.squeeze(seed);
    stream.squeeze(m);
    stream.squeeze(reject_ct);
    const auto kp = kem.generate_keypair(seed);
    const auto enc = kem.encapsulate(kp.public_key, m);
    const auto k = kem.decapsulate(kp.secret_key, enc.ciphertext);
    ASSERT_EQ(copy(k), copy(enc.shared_secret)) << "iteration " << i;
    const auto k_reject = kem.decapsulate(kp.secret_key, reject_ct);
    acc.absorb(kp.public_key);
    acc.absorb(kp.secret_key);
    acc.absorb(enc.ciphertext);
    acc.absorb(enc.shared_secret);
    acc.absorb(k_reject);
  }
  Bytes digest(32);
  acc.squeeze(digest);
  EXPECT_EQ(to_hex(digest), "f959d18d3d1180121433bf0e05f11e7908cf9d03edc150b2b07cb90bef5bc1c1");
}

class MlKemAllSets : public ::testing::TestWithParam<const char*> {
 protected:
  const Kem& kem() const { return kem_by_name(GetParam()); }
};

TEST_P(MlKemAllSets, RandomRoundTrip) {
  for (int i = 0; i < 20; ++i) {
    const auto kp = kem().generate_keypair();
    ASSERT_EQ(kp.public_key.size(), kem().public_key_size());
    ASSERT_EQ(kp.secret_key.size(), kem().secret_key_size());
    const auto enc = kem().encapsulate(kp.public_key);
    ASSERT_EQ(enc.ciphertext.size(), kem().ciphertext_size());
    EXPECT_EQ(copy(kem().decapsulate(kp.secret_key, enc.ciphertext)), copy(enc.shared_secret));
  }
}

TEST_P(MlKemAllSets, TamperedCiphertextGivesImplicitRejection) {
  const auto kp = kem().generate_keypair();
  const auto enc = kem().encapsulate(kp.public_key);
  Bytes ct = enc.ciphertext;
  ct[ct.size() / 2] ^= 0x01;
  const auto k1 = kem().decapsulate(kp.secret_key, ct);
  const auto k2 = kem().decapsulate(kp.secret_key, ct);
  EXPECT_NE(copy(k1), copy(enc.shared_secret));
  EXPECT_EQ(copy(k1), copy(k2)) << "implicit rejection must be deterministic";
  // The rejection key is J(z || c): a different ciphertext gives a different key.
  ct[0] ^= 0x80;
  EXPECT_NE(copy(kem().decapsulate(kp.secret_key, ct)), copy(k1));
}

TEST_P(MlKemAllSets, WrongLengthsAreRefused) {
  const auto kp = kem().generate_keypair();
  const auto enc = kem().encapsulate(kp.public_key);
  auto expect_length_error = [](auto&& f) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_length);
    }
  };
  Bytes short_ek(kp.public_key.begin(), kp.public_key.end() - 1);
  Bytes long_ct = enc.ciphertext;
  long_ct.push_back(0);
  SecretBytes short_dk(kp.secret_key.begin(), kp.secret_key.end() - 1);
  expect_length_error([&] { kem().encapsulate(short_ek); });
  expect_length_error([&] { kem().decapsulate(kp.secret_key, long_ct); });
  expect_length_error([&] { kem().decapsulate(short_dk, enc.ciphertext); });
  expect_length_error([&] { kem().generate_keypair(Bytes(63)); });
  expect_length_error([&] { kem().encapsulate(kp.public_key, Bytes(31)); });
}

TEST_P(MlKemAllSets, DecapsulationKeyHashCheck) {
  // FIPS 203 section 7.3: a dk whose embedded ek does not hash to the embedded H(ek) is refused.
  const auto kp = kem().generate_keypair();
  const auto enc = kem().encapsulate(kp.public_key);
  const std::size_t ek_offset = kem().secret_key_size() - kem().public_key_size() - 64;
  for (std::size_t at : {ek_offset, ek_offset + kem().public_key_size() + 5}) {  // ek, then h
    SecretBytes dk = kp.secret_key;
    dk[at] ^= 0x01;
    try {
      (void)kem().decapsulate(dk, enc.ciphertext);
      ADD_FAILURE() << "tampered dk accepted at byte " << at;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_key);
    }
  }
}

TEST_P(MlKemAllSets, ModulusCheckRejectsUnreducedCoefficient) {
  const auto kp = kem().generate_keypair();
  Bytes ek = kp.public_key;
  // Set the first 12-bit coefficient to 3329 = q (0xd01), which is not reduced.
  ek[0] = 0x01;
  ek[1] = static_cast<std::uint8_t>((ek[1] & 0xf0) | 0x0d);
  EXPECT_THROW(kem().check_public_key(ek), Error);
  try {
    (void)kem().encapsulate(ek);
    ADD_FAILURE() << "unreduced ek accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_key);
  }
  ek[1] = static_cast<std::uint8_t>((ek[1] & 0xf0) | 0x0d);
  ek[0] = 0x00;  // 3328 = q - 1 is fine
  EXPECT_NO_THROW(kem().check_public_key(ek));
}

INSTANTIATE_TEST_SUITE_P(Sets, MlKemAllSets,
                         ::testing::Values("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"));

TEST(KemRegistry, NamesAndSizes) {
  const auto names = kem_names();
  ASSERT_EQ(names.size(), 4u);
  struct Expect {
    const char* name;
    std::size_t ek, dk, ct;
  };
  for (const Expect& e : {Expect{"ML-KEM-512", 800, 1632, 768}, Expect{"ML-KEM-768", 1184, 2400, 1088},
                          Expect{"ML-KEM-1024", 1568, 3168, 1568}, Expect{"X-Wing", 1216, 32, 1120}}) {
    const Kem& k = kem_by_name(e.name);
    EXPECT_EQ(k.name(), e.name);
    EXPECT_EQ(k.public_key_size(), e.ek);
    EXPECT_EQ(k.secret_key_size(), e.dk);
    EXPECT_EQ(k.ciphertext_size(), e.ct);
    EXPECT_EQ(k.shared_secret_size(), 32u);
  }
  try {
    (void)kem_by_name("ml-kem-768");
    ADD_FAILURE() << "names are exact";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unknown_algorithm);
  }
}

}  // namespace
}  // namespace pqot::crypto
