// Saber behaviour beyond the known answers (kat_test.cpp): round trips, implicit rejection, the
// input checks, determinism, and the arithmetic underneath (bit-string conversions, the binomial
// sampler, polynomial multiplication against the schoolbook definition).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "crypto/contenders/saber/pack.hpp"
#include "crypto/contenders/saber/params.hpp"
#include "crypto/contenders/saber/poly_mul.hpp"
#include "crypto/contenders/saber/sampling.hpp"
#include "pqot/crypto/contender_kem.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto::saber {
namespace {

Bytes copy(const SecretBytes& s) {
  return Bytes(s.begin(), s.end());
}

// Reproducible "random" bytes: a failure names the iteration and can be replayed.
Bytes pseudo_random(std::mt19937_64& rng, std::size_t n) {
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

Poly random_poly(std::mt19937_64& rng) {
  Poly p{};
  for (auto& c : p.c) c = static_cast<std::uint16_t>(rng());
  return p;
}

class SaberAllLevels : public ::testing::TestWithParam<const char*> {
 protected:
  const Kem& kem() const { return contender_kem_by_name(GetParam()); }
};

TEST_P(SaberAllLevels, RoundTripWithSeeds) {
  std::mt19937_64 rng(0x5abe7);
  for (int i = 0; i < 8; ++i) {
    const auto kp = kem().generate_keypair(pseudo_random(rng, kem().keygen_seed_size()));
    ASSERT_EQ(kp.public_key.size(), kem().public_key_size());
    ASSERT_EQ(kp.secret_key.size(), kem().secret_key_size());
    const auto enc = kem().encapsulate(kp.public_key, pseudo_random(rng, kem().encaps_seed_size()));
    ASSERT_EQ(enc.ciphertext.size(), kem().ciphertext_size());
    ASSERT_EQ(enc.shared_secret.size(), 32u);
    EXPECT_EQ(copy(kem().decapsulate(kp.secret_key, enc.ciphertext)), copy(enc.shared_secret))
        << "iteration " << i;
  }
}

TEST_P(SaberAllLevels, RoundTripFromTheOsGenerator) {
  for (int i = 0; i < 4; ++i) {
    const auto kp = kem().generate_keypair();
    const auto enc = kem().encapsulate(kp.public_key);
    EXPECT_EQ(copy(kem().decapsulate(kp.secret_key, enc.ciphertext)), copy(enc.shared_secret));
  }
}

// Saber.KEM.Decaps: a ciphertext that does not re-encrypt to itself gives SHA3-256(z ‖
// SHA3-256(c)), z being the last 32 bytes of the secret key.
TEST_P(SaberAllLevels, TamperedCiphertextGivesImplicitRejection) {
  std::mt19937_64 rng(7);
  const auto kp = kem().generate_keypair(pseudo_random(rng, kem().keygen_seed_size()));
  const auto enc = kem().encapsulate(kp.public_key, pseudo_random(rng, 32));
  const ByteView z = ByteView(kp.secret_key).last(32);
  // The first byte is in b', the last in c_m.
  for (std::size_t pos :
       {std::size_t{0}, kem().ciphertext_size() / 2, kem().ciphertext_size() - 1}) {
    Bytes ct = enc.ciphertext;
    ct[pos] ^= 0x01;
    const auto k = copy(kem().decapsulate(kp.secret_key, ct));
    EXPECT_NE(k, copy(enc.shared_secret)) << "byte " << pos;
    Bytes in(z.begin(), z.end());
    const auto hc = sha3_256(ct);
    in.insert(in.end(), hc.begin(), hc.end());
    const auto expected = sha3_256(in);
    EXPECT_EQ(k, Bytes(expected.begin(), expected.end())) << "byte " << pos;
  }
}

TEST_P(SaberAllLevels, WrongLengthsAreRejected) {
  const auto kp = kem().generate_keypair();
  const auto enc = kem().encapsulate(kp.public_key);
  auto expect_length_error = [](auto&& f) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_length) << e.what();
    }
  };
  const Bytes pk = kp.public_key;
  const Bytes sk(kp.secret_key.begin(), kp.secret_key.end());
  const Bytes ct = enc.ciphertext;
  for (int delta : {-1, 1}) {
    expect_length_error([&] { kem().generate_keypair(Bytes(kem().keygen_seed_size() + delta)); });
    expect_length_error([&] { kem().check_public_key(Bytes(pk.size() + delta)); });
    expect_length_error([&] { kem().encapsulate(Bytes(pk.size() + delta), Bytes(32)); });
    expect_length_error([&] { kem().encapsulate(pk, Bytes(32 + delta)); });
    expect_length_error([&] { kem().decapsulate(Bytes(sk.size() + delta), ct); });
    expect_length_error([&] { kem().decapsulate(sk, Bytes(ct.size() + delta)); });
  }
  try {
    kem().decapsulate(sk, Bytes(ct.size() - 1));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), std::string(kem().name()) + ": ciphertext must be " +
                                         std::to_string(ct.size()) + " bytes, got " +
                                         std::to_string(ct.size() - 1));
  }
}

// Every 10-bit coefficient is valid mod p: the public-key check is the length alone.
TEST_P(SaberAllLevels, AnyPublicKeyOfTheRightLengthIsAccepted) {
  const Bytes pk(kem().public_key_size(), 0xff);
  EXPECT_NO_THROW(kem().check_public_key(pk));
  EXPECT_NO_THROW(kem().encapsulate(pk, Bytes(32, 1)));
}

TEST_P(SaberAllLevels, SameSeedsGiveSameKeysAndCiphertexts) {
  std::mt19937_64 rng(42);
  Bytes seed = pseudo_random(rng, kem().keygen_seed_size());
  const Bytes m = pseudo_random(rng, 32);
  const auto a = kem().generate_keypair(seed);
  const auto b = kem().generate_keypair(seed);
  EXPECT_EQ(a.public_key, b.public_key);
  EXPECT_EQ(copy(a.secret_key), copy(b.secret_key));
  const auto ea = kem().encapsulate(a.public_key, m);
  const auto eb = kem().encapsulate(a.public_key, m);
  EXPECT_EQ(ea.ciphertext, eb.ciphertext);
  EXPECT_EQ(copy(ea.shared_secret), copy(eb.shared_secret));

  // z (the third 32 bytes) only lands at the end of the secret key.
  seed.back() ^= 0x80;
  const auto c = kem().generate_keypair(seed);
  EXPECT_EQ(c.public_key, a.public_key);
  const std::size_t n = a.secret_key.size();
  EXPECT_EQ(Bytes(a.secret_key.begin(), a.secret_key.end() - 32),
            Bytes(c.secret_key.begin(), c.secret_key.end() - 32));
  EXPECT_NE(a.secret_key[n - 1], c.secret_key[n - 1]);
}

INSTANTIATE_TEST_SUITE_P(Round3, SaberAllLevels,
                         ::testing::Values("LightSaber", "Saber", "FireSaber"),
                         [](const auto& info) { return std::string(info.param); });

// The stream written one bit at a time, straight from the definition: bit b of coefficient i is
// stream bit i*w + b, and stream bit k is bit k%8 of byte k/8.
Bytes pack_bit_by_bit(const Poly& a, int width) {
  Bytes out(32 * static_cast<std::size_t>(width), 0);
  for (std::size_t i = 0; i < kN; ++i) {
    for (int b = 0; b < width; ++b) {
      const std::size_t k = i * static_cast<std::size_t>(width) + static_cast<std::size_t>(b);
      out[k / 8] = static_cast<std::uint8_t>(out[k / 8] | (((a.c[i] >> b) & 1u) << (k % 8)));
    }
  }
  return out;
}

// Bit-string conversions: the widths Saber uses (1 for m, et = 3, 4, 6, 10 for p, 13 for q),
// which have unrolled code, and a few others, which take the generic loop.
TEST(SaberPack, MatchesTheDefinitionAndRoundTripsAtEveryWidth) {
  std::mt19937_64 rng(1);
  for (int width : {1, 3, 4, 6, 10, 13, 2, 5, 7, 11, 16}) {
    const Poly a = random_poly(rng);
    Bytes packed(32 * static_cast<std::size_t>(width));
    pack_poly(packed.data(), a, width);
    EXPECT_EQ(packed, pack_bit_by_bit(a, width)) << "width " << width;
    Poly b{};
    unpack_poly(b, packed.data(), width);
    for (std::size_t i = 0; i < kN; ++i) {
      ASSERT_EQ(b.c[i], a.c[i] & ((1u << width) - 1)) << "width " << width << " index " << i;
    }
    const Bytes bytes = pseudo_random(rng, packed.size());
    unpack_poly(b, bytes.data(), width);
    Bytes again(bytes.size());
    pack_poly(again.data(), b, width);
    EXPECT_EQ(again, bytes) << "width " << width;
  }
}

TEST(SaberPack, IsLittleEndianLsbFirst) {
  Poly a{};
  a.c[0] = 0x3ff;
  a.c[1] = 0x001;
  Bytes packed(320);
  pack_poly(packed.data(), a, kEp);
  EXPECT_EQ(packed[0], 0xff);  // bits 0-7 of coefficient 0
  EXPECT_EQ(packed[1], 0x07);  // bits 8-9 of coefficient 0, then bit 0 of coefficient 1 at bit 10
  EXPECT_EQ(packed[2], 0x00);
  // BS2POLmsg: bit j of byte i is coefficient 8i + j.
  Poly m{};
  const std::uint8_t msg[32] = {0x81};
  unpack_poly(m, msg, 1);
  EXPECT_EQ(m.c[0], 1);
  EXPECT_EQ(m.c[7], 1);
  EXPECT_EQ(m.c[1] + m.c[8], 0);
}

// beta_mu: ones in the low mu/2 bits minus ones in the high mu/2 bits, in [-mu/2, mu/2].
TEST(SaberSampling, BinomialSamplesStayInRange) {
  std::mt19937_64 rng(3);
  for (int mu : {6, 8, 10}) {
    const Bytes buf = pseudo_random(rng, 32 * static_cast<std::size_t>(mu));
    Poly s{};
    sample_cbd(s, buf.data(), mu);
    for (auto c : s.c) {
      const auto v = static_cast<std::int16_t>(c);
      ASSERT_LE(v, mu / 2);
      ASSERT_GE(v, -mu / 2);
    }
    // All-ones low halves and zero high halves give +mu/2 everywhere.
    Poly fields{};
    for (auto& c : fields.c) c = static_cast<std::uint16_t>((1u << (mu / 2)) - 1);
    Bytes packed(32 * static_cast<std::size_t>(mu));
    pack_poly(packed.data(), fields, mu);
    sample_cbd(s, packed.data(), mu);
    for (auto c : s.c) ASSERT_EQ(c, mu / 2);
  }
}

TEST(SaberPolyMul, KaratsubaMatchesTheSchoolbookDefinition) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20; ++i) {
    const Poly a = random_poly(rng);
    const Poly b = random_poly(rng);
    Poly fast = random_poly(rng);  // also checks that it accumulates
    Poly slow = fast;
    poly_mul_acc(fast, a, b);
    poly_mul_acc_schoolbook(slow, a, b);
    ASSERT_EQ(fast.c, slow.c) << "iteration " << i;
  }
  Poly ones{};
  ones.c.fill(0xffff);
  Poly fast{}, slow{};
  poly_mul_acc(fast, ones, ones);
  poly_mul_acc_schoolbook(slow, ones, ones);
  EXPECT_EQ(fast.c, slow.c);
}

TEST(SaberPolyMul, XToThe256IsMinusOne) {
  Poly a{}, b{}, r{};
  a.c[255] = 1;
  b.c[1] = 1;
  poly_mul_acc(r, a, b);
  EXPECT_EQ(r.c[0], 0xffff);
  for (std::size_t i = 1; i < kN; ++i) EXPECT_EQ(r.c[i], 0);
}

}  // namespace
}  // namespace pqot::crypto::saber
