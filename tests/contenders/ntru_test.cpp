// NTRU beyond its known answers: the ring arithmetic against definitions (inverses, Lift, the
// sorting network, the encodings), round trips, implicit rejection and the input checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <random>
#include <vector>

#include "crypto/contenders/ntru/pack.hpp"
#include "crypto/contenders/ntru/params.hpp"
#include "crypto/contenders/ntru/poly.hpp"
#include "crypto/contenders/ntru/sample.hpp"
#include "pqot/crypto/contender_kem.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto::ntru {
namespace {

const Params* const kAll[] = {&kHps2048509, &kHps2048677, &kHps4096821, &kHrss701};

}  // namespace

// GoogleTest prints a parameter set by its name (found by argument-dependent lookup).
void PrintTo(const Params* p, std::ostream* os) { *os << p->name; }

namespace {

Poly random_ternary(std::mt19937& rng, std::size_t n) {
  Poly a;
  for (std::size_t i = 0; i + 1 < n; ++i) a.c[i] = static_cast<std::uint16_t>(rng() % 3);
  return a;
}

// a mod (3, Phi_n) in {0,1,2}, for comparing S_3 elements.
Poly canonical_s3(const Poly& a, std::size_t n) {
  Poly r = a;
  for (std::size_t i = 0; i < n; ++i) r.c[i] = mod3(r.c[i]);
  mod_3_phi(r, n);
  return r;
}

bool is_one_mod_phi(Poly x, std::size_t n, std::uint16_t mask) {
  mod_q_phi(x, n);
  for (std::size_t i = 0; i < n; ++i) {
    if ((x.c[i] & mask) != (i == 0 ? 1 : 0)) return false;
  }
  return true;
}

class NtruSet : public ::testing::TestWithParam<const Params*> {
 protected:
  const Params& p() const { return *GetParam(); }
  const Kem& kem() const { return contender_kem_by_name(p().name); }
};

TEST_P(NtruSet, TheS3InverseIsAnInverse) {
  std::mt19937 rng(1);
  for (int round = 0; round < 5; ++round) {
    const Poly a = random_ternary(rng, p().n);
    Poly inv, prod;
    inverse_s3(inv, a, p());
    EXPECT_EQ(inv.c[p().n - 1], 0);
    mul_s3(prod, a, inv, p());
    for (std::size_t i = 0; i < p().n; ++i) {
      ASSERT_EQ(prod.c[i], i == 0 ? 1 : 0) << "round " << round << " coefficient " << i;
    }
  }
}

TEST_P(NtruSet, TheSqInverseIsAnInverseModQAndPhi) {
  std::mt19937 rng(2);
  for (int round = 0; round < 3; ++round) {
    Poly a;  // odd a(1) is not needed: any a invertible mod (2, Phi_n) has an inverse mod q
    for (std::size_t i = 0; i < p().n; ++i) a.c[i] = static_cast<std::uint16_t>(rng());
    Poly inv, prod;
    inverse_rq(inv, a, p());
    mul_rq(prod, a, inv, p().n);
    EXPECT_TRUE(is_one_mod_phi(prod, p().n, static_cast<std::uint16_t>(p().q() - 1)))
        << "round " << round;
  }
}

TEST_P(NtruSet, LiftIsTheIdentityModThreeAndPhi) {
  std::mt19937 rng(3);
  for (int round = 0; round < 5; ++round) {
    const Poly m = random_ternary(rng, p().n);
    Poly lifted, back;
    lift(lifted, m, p());
    rq_to_s3(back, lifted, p());
    const Poly want = canonical_s3(m, p().n);
    for (std::size_t i = 0; i < p().n; ++i) ASSERT_EQ(back.c[i], want.c[i]) << i;
    if (p().hrss) {
      // HRSS: Lift(m) is a multiple of (x - 1), so its coefficients sum to 0 mod q.
      std::uint16_t sum = 0;
      for (std::size_t i = 0; i < p().n; ++i) sum = static_cast<std::uint16_t>(sum + lifted.c[i]);
      EXPECT_EQ(sum & (p().q() - 1), 0);
    }
  }
}

TEST_P(NtruSet, FixedTypeSamplesHaveTheirWeight) {
  if (p().hrss) GTEST_SKIP() << "HRSS has no fixed-type sampler";
  Bytes u(p().fixed_type_bytes());
  for (int round = 0; round < 5; ++round) {
    random_bytes(u);
    Poly m;
    sample_fixed_type(m, u.data(), p());
    const auto ones = std::count(m.c.begin(), m.c.begin() + static_cast<long>(p().n), 1);
    const auto twos = std::count(m.c.begin(), m.c.begin() + static_cast<long>(p().n), 2);
    EXPECT_EQ(ones, static_cast<long>(p().weight / 2));
    EXPECT_EQ(twos, static_cast<long>(p().weight / 2));
    EXPECT_EQ(m.c[p().n - 1], 0);
  }
}

TEST_P(NtruSet, TheEncodingsRoundTrip) {
  std::mt19937 rng(4);
  Poly a, b;
  for (std::size_t i = 0; i + 1 < p().n; ++i) a.c[i] = static_cast<std::uint16_t>(rng() % p().q());
  std::vector<std::uint8_t> buf(p().packed_q_bytes());
  sq_to_bytes(buf.data(), a, p());
  sq_from_bytes(b, buf.data(), p());
  for (std::size_t i = 0; i + 1 < p().n; ++i) ASSERT_EQ(b.c[i], a.c[i]) << i;
  EXPECT_EQ(b.c[p().n - 1], 0);

  const Poly t = random_ternary(rng, p().n);
  std::vector<std::uint8_t> tb(p().trinary_bytes());
  s3_to_bytes(tb.data(), t, p());
  s3_from_bytes(b, tb.data(), p());
  for (std::size_t i = 0; i < p().n; ++i) ASSERT_EQ(b.c[i], t.c[i]) << i;
}

TEST_P(NtruSet, KeysEncapsulateAndDecapsulateToOneSecret) {
  for (int round = 0; round < 4; ++round) {
    const auto kp = kem().generate_keypair();
    const auto enc = kem().encapsulate(kp.public_key);
    EXPECT_EQ(enc.ciphertext.size(), p().ciphertext_bytes());
    EXPECT_TRUE(ct_equal(kem().decapsulate(kp.secret_key, enc.ciphertext), enc.shared_secret));
  }
}

Bytes counting_seed(std::size_t n) {
  Bytes seed(n);
  for (std::size_t i = 0; i < n; ++i) seed[i] = static_cast<std::uint8_t>(7 * i + 1);
  return seed;
}

TEST_P(NtruSet, TheSameSeedGivesTheSameKeys) {
  const Bytes seed = counting_seed(kem().keygen_seed_size());
  const auto a = kem().generate_keypair(seed);
  const auto b = kem().generate_keypair(seed);
  EXPECT_EQ(a.public_key, b.public_key);
  EXPECT_TRUE(ct_equal(a.secret_key, b.secret_key));
  std::size_t calls = 0;
  for (auto n : kem().keygen_randombytes_calls()) calls += n;
  EXPECT_EQ(calls, kem().keygen_seed_size());
}

// The implicit-rejection secret, computed here from its definition: SHA3-256(prf key || c).
Bytes rejection_secret(const Params& p, const SecretBytes& sk, const Bytes& ct) {
  Bytes in(sk.begin() + static_cast<long>(p.owcpa_secret_key_bytes()), sk.end());
  in.insert(in.end(), ct.begin(), ct.end());
  const auto h = sha3_256(in);
  return Bytes(h.begin(), h.end());
}

TEST_P(NtruSet, AWrongCiphertextGivesThePrfSecret) {
  const auto kp = kem().generate_keypair();
  const auto enc = kem().encapsulate(kp.public_key);
  for (std::size_t pos : {std::size_t{0}, enc.ciphertext.size() / 2, enc.ciphertext.size() - 2}) {
    Bytes bad = enc.ciphertext;
    bad[pos] ^= 0x04;
    const auto ss = kem().decapsulate(kp.secret_key, bad);
    EXPECT_EQ(Bytes(ss.begin(), ss.end()), rejection_secret(p(), kp.secret_key, bad)) << pos;
    EXPECT_FALSE(ct_equal(ss, enc.shared_secret));
  }
}

TEST_P(NtruSet, PaddingBitsInTheCiphertextAreRejected) {
  const unsigned used = (p().logq * p().pack_deg()) & 7;
  if (used == 0) GTEST_SKIP() << "the last byte has no padding bits";
  const auto kp = kem().generate_keypair();
  const auto enc = kem().encapsulate(kp.public_key);
  Bytes bad = enc.ciphertext;
  bad.back() = static_cast<std::uint8_t>(bad.back() | 0x80);
  const auto ss = kem().decapsulate(kp.secret_key, bad);
  EXPECT_EQ(Bytes(ss.begin(), ss.end()), rejection_secret(p(), kp.secret_key, bad));
  // The same bit in a public key is refused outright.
  Bytes pk = kp.public_key;
  pk.back() = static_cast<std::uint8_t>(pk.back() | 0x80);
  EXPECT_THROW(kem().check_public_key(pk), Error);
  EXPECT_THROW((void)kem().encapsulate(pk), Error);
}

TEST_P(NtruSet, ASeedGivingFZeroOrGZeroIsRefusedAndSoIsAZeroKey) {
  // Bytes that are 0 mod 3 sample to zero coefficients: f = 0 from the first n-1 bytes.
  EXPECT_THROW((void)kem().generate_keypair(Bytes(kem().keygen_seed_size(), 0x42)), Error);
  if (p().hrss) {  // g = 0 too, from the second n-1 bytes
    Bytes seed = counting_seed(kem().keygen_seed_size());
    std::fill(seed.begin() + static_cast<long>(p().iid_bytes()),
              seed.begin() + static_cast<long>(2 * p().iid_bytes()), 0);
    EXPECT_THROW((void)kem().generate_keypair(seed), Error);
  }
  EXPECT_THROW(kem().check_public_key(Bytes(kem().public_key_size(), 0)), Error);
  EXPECT_THROW((void)kem().encapsulate(Bytes(kem().public_key_size(), 0)), Error);
}

TEST_P(NtruSet, WrongLengthsAreRefused) {
  const auto kp = kem().generate_keypair();
  const auto enc = kem().encapsulate(kp.public_key);
  Bytes short_pk(kp.public_key.begin(), kp.public_key.end() - 1);
  EXPECT_THROW((void)kem().encapsulate(short_pk), Error);
  Bytes long_ct = enc.ciphertext;
  long_ct.push_back(0);
  EXPECT_THROW((void)kem().decapsulate(kp.secret_key, long_ct), Error);
  SecretBytes short_sk(kp.secret_key.begin(), kp.secret_key.end() - 1);
  EXPECT_THROW((void)kem().decapsulate(short_sk, enc.ciphertext), Error);
  EXPECT_THROW((void)kem().generate_keypair(Bytes(kem().keygen_seed_size() - 1)), Error);
  EXPECT_THROW((void)kem().encapsulate(kp.public_key, Bytes(kem().encaps_seed_size() + 1)),
               Error);
}

INSTANTIATE_TEST_SUITE_P(AllSets, NtruSet, ::testing::ValuesIn(kAll), [](const auto& info) {
  std::string n(info.param->name);
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
});

TEST(NtruSort, TheNetworkSortsAsStdSort) {
  std::mt19937 rng(5);
  for (std::size_t n : {0, 1, 2, 3, 5, 8, 17, 100, 508, 676, 820}) {
    std::vector<std::int32_t> x(n);
    for (auto& v : x) v = static_cast<std::int32_t>(rng());
    if (n > 4) x[1] = x[3];  // a repeated key
    auto want = x;
    std::sort(want.begin(), want.end());
    sort_int32(x.data(), x.size());
    EXPECT_EQ(x, want) << n;
  }
}

}  // namespace
}  // namespace pqot::crypto::ntru
