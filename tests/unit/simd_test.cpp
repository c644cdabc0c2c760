// The vector code of the crypto core against its portable code, bit for bit (docs/crypto.md,
// "Vector code and its dispatch"): ML-DSA's AVX2 NTT and products (src/crypto/mldsa/ntt_avx2.cpp)
// on random and extreme inputs over the whole range each caller may pass (the bounds in
// src/crypto/mldsa/poly.hpp); the four-way Keccak (src/crypto/keccak_x4.cpp) and the four-way
// ExpandA / ExpandMask samplers on it; the dispatch hook of src/crypto/simd.hpp. The ML-DSA
// known-answer tests run through both paths: mldsa_wycheproof_test.cpp (its *Portable tests).
#include "crypto/simd.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "crypto/keccak_x4.hpp"
#include "crypto/mldsa/ntt_impl.hpp"
#include "crypto/mldsa/params.hpp"
#include "crypto/mldsa/poly.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto::mldsa {
namespace {

constexpr std::int32_t kNttBound = kQ - 1;          // ntt, invntt_tomont: |a| < q
constexpr std::int32_t kProductBound = 9 * kQ - 1;  // poly_pointwise, poly_dot's b: |b| < 9q

// Polynomials with coefficients in [-bound, bound]: uniform ones, and extreme ones (every
// coefficient +-bound, 0 or +-1 in patterns), from a fixed seed so that a failure repeats.
class SimdInputs {
 public:
  explicit SimdInputs(std::uint64_t seed) : rng_(seed) {}

  Poly uniform(std::int32_t lo, std::int32_t hi) {
    std::uniform_int_distribution<std::int32_t> d(lo, hi);
    Poly p;
    for (auto& x : p.c) x = d(rng_);
    return p;
  }

  // Pattern k of a few: constant +bound, constant -bound, alternating, random signs of bound,
  // random picks among {-bound, -1, 0, 1, bound}.
  Poly extreme(int k, std::int32_t bound) {
    Poly p;
    std::uniform_int_distribution<int> pick(0, 4);
    const std::int32_t values[] = {-bound, -1, 0, 1, bound};
    for (std::size_t i = 0; i < p.c.size(); ++i) {
      switch (k % 5) {
        case 0:
          p.c[i] = bound;
          break;
        case 1:
          p.c[i] = -bound;
          break;
        case 2:
          p.c[i] = i % 2 == 0 ? bound : -bound;
          break;
        case 3:
          p.c[i] = pick(rng_) < 2 ? bound : -bound;
          break;
        default:
          p.c[i] = values[pick(rng_)];
          break;
      }
    }
    return p;
  }

  // Case i of a test: the first 40 extreme, the rest uniform over [lo, hi].
  Poly any(int i, std::int32_t lo, std::int32_t hi) {
    return i < 40 ? extreme(i, hi) : uniform(lo, hi);
  }

 private:
  std::mt19937_64 rng_;
};

constexpr int kSimdCases = 1000;

// GTEST_SKIP in a helper only returns from the helper: each test checks this itself.
bool simd_test_can_run() {
#if defined(__x86_64__)
  return simd::avx2_available();
#else
  return false;
#endif
}

#if defined(__x86_64__)

TEST(MlDsaSimd, NttMatchesPortableForInputsBelowQ) {
  if (!simd_test_can_run()) GTEST_SKIP() << "this CPU has no AVX2";
  SimdInputs in(1);
  for (int i = 0; i < kSimdCases; ++i) {
    const Poly a = in.any(i, -kNttBound, kNttBound);
    Poly expected = a, got = a;
    portable::ntt(expected);
    avx2::ntt(got);
    ASSERT_EQ(got.c, expected.c) << "case " << i;
  }
}

TEST(MlDsaSimd, InverseNttMatchesPortableForInputsBelowQ) {
  if (!simd_test_can_run()) GTEST_SKIP() << "this CPU has no AVX2";
  SimdInputs in(2);
  for (int i = 0; i < kSimdCases; ++i) {
    const Poly a = in.any(i, -kNttBound, kNttBound);
    Poly expected = a, got = a;
    portable::invntt_tomont(expected);
    avx2::invntt_tomont(got);
    ASSERT_EQ(got.c, expected.c) << "case " << i;
  }
}

TEST(MlDsaSimd, PointwiseMatchesPortableForInputsBelow9Q) {
  if (!simd_test_can_run()) GTEST_SKIP() << "this CPU has no AVX2";
  SimdInputs in(3);
  for (int i = 0; i < kSimdCases; ++i) {
    const Poly a = in.any(i, -kProductBound, kProductBound);
    const Poly b = in.any((i + 3) % kSimdCases, -kProductBound, kProductBound);
    Poly expected, got;
    portable::poly_pointwise(expected, a, b);
    avx2::poly_pointwise(got, a, b);
    ASSERT_EQ(got.c, expected.c) << "case " << i;
  }
}

// a: entries of A_hat (in [0, q), tested over (-q, q) as poly.hpp allows); b below 9q; n = l of
// ML-DSA-44, -65, -87. The extreme cases reach the largest sums (7 (q-1)(9q-1)).
TEST(MlDsaSimd, DotMatchesPortableForEveryL) {
  if (!simd_test_can_run()) GTEST_SKIP() << "this CPU has no AVX2";
  SimdInputs in(4);
  for (const std::size_t n : {4u, 5u, 7u}) {
    for (int i = 0; i < kSimdCases / 4; ++i) {
      std::vector<Poly> a(n), b(n);
      for (std::size_t j = 0; j < n; ++j) {
        a[j] = in.any(i, -kNttBound, kNttBound);
        b[j] = in.any(i, -kProductBound, kProductBound);
      }
      Poly expected, got;
      portable::poly_dot(expected, a.data(), b.data(), n);
      avx2::poly_dot(got, a.data(), b.data(), n);
      ASSERT_EQ(got.c, expected.c) << "n " << n << ", case " << i;
    }
  }
}

// The chain the signer runs (ntt, products, reduce32, inverse), on the same data through both
// paths, with the products of two NTT outputs (the largest values poly_pointwise sees).
TEST(MlDsaSimd, SignersChainMatchesPortable) {
  if (!simd_test_can_run()) GTEST_SKIP() << "this CPU has no AVX2";
  SimdInputs in(5);
  for (int i = 0; i < kSimdCases / 10; ++i) {
    Poly a = in.any(i, -kNttBound, kNttBound), b = in.any(i + 1, -kNttBound, kNttBound);
    Poly a2 = a, b2 = b;
    portable::ntt(a);
    portable::ntt(b);
    avx2::ntt(a2);
    avx2::ntt(b2);
    ASSERT_EQ(a2.c, a.c);
    Poly expected, got;
    portable::poly_pointwise(expected, a, b);
    avx2::poly_pointwise(got, a2, b2);
    ASSERT_EQ(got.c, expected.c) << "case " << i;
    portable::invntt_tomont(expected);
    avx2::invntt_tomont(got);
    ASSERT_EQ(got.c, expected.c) << "case " << i;
  }
}

#endif  // defined(__x86_64__)

// The public functions of poly.hpp follow the hook: with the portable code forced, use_avx2() is
// false, and ntt() gives the portable result (and the AVX2 one otherwise, equal by the tests
// above).
TEST(MlDsaSimd, ForcePortableSwitchesTheDispatch) {
  SimdInputs in(6);
  const Poly a = in.uniform(-kNttBound, kNttBound);
  Poly expected = a;
  portable::ntt(expected);
  {
    const simd::PortableScope portable;
    EXPECT_FALSE(simd::use_avx2());
    Poly got = a;
    ntt(got);
    EXPECT_EQ(got.c, expected.c);
  }
  EXPECT_EQ(simd::use_avx2(), simd::avx2_available());
  Poly got = a;
  ntt(got);
  EXPECT_EQ(got.c, expected.c);
  if (!simd_test_can_run()) GTEST_SKIP() << "this CPU has no AVX2: only the portable path ran";
}

#if defined(__x86_64__)

TEST(KeccakX4, Avx2PermutationMatchesFourScalarOnes) {
  if (!simd_test_can_run()) GTEST_SKIP() << "this CPU has no AVX2";
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    KeccakX4State got;
    for (auto& lanes : got.lane) {
      for (auto& x : lanes) x = i == 0 ? 0 : i == 1 ? ~std::uint64_t{0} : rng();
    }
    KeccakX4State expected = got;
    crypto::avx2::keccak_f1600_x4(got);
    for (std::size_t j = 0; j < 4; ++j) {
      std::uint64_t one[25];
      for (std::size_t l = 0; l < 25; ++l) one[l] = expected.lane[l][j];
      keccak_f1600(one);
      for (std::size_t l = 0; l < 25; ++l) ASSERT_EQ(got.lane[l][j], one[l]) << i << " " << j;
    }
  }
}

#endif  // defined(__x86_64__)

// ShakeX4 against four Shake128 / Shake256 on inputs of lengths around the rate, on both paths.
TEST(KeccakX4, ShakeX4MatchesFourSpongesOnBothPaths) {
  std::mt19937_64 rng(8);
  for (const bool portable : {false, true}) {
    const bool previous = simd::force_portable(portable);
    for (const std::size_t rate : {std::size_t{136}, std::size_t{168}}) {
      for (const std::size_t len : {0, 1, 34, 66, 135, 136, 137, 167, 168, 169, 400}) {
        std::uint8_t in[4][400];
        for (auto& row : in) {
          for (auto& b : row) b = static_cast<std::uint8_t>(rng());
        }
        const std::uint8_t* const ins[4] = {in[0], in[1], in[2], in[3]};
        std::vector<std::uint8_t> out[4];
        for (auto& o : out) o.resize(5 * rate);
        ShakeX4 x(rate);
        x.absorb_once(ins, len);
        std::uint8_t* const first[4] = {out[0].data(), out[1].data(), out[2].data(), out[3].data()};
        x.squeeze_blocks(first, 2);
        std::uint8_t* const rest[4] = {first[0] + 2 * rate, first[1] + 2 * rate,
                                       first[2] + 2 * rate, first[3] + 2 * rate};
        x.squeeze_blocks(rest, 3);
        for (std::size_t j = 0; j < 4; ++j) {
          KeccakSponge one(rate, 0x1f);
          one.absorb({in[j], len});
          std::vector<std::uint8_t> expected(5 * rate);
          one.squeeze(expected);
          ASSERT_EQ(out[j], expected) << "rate " << rate << ", length " << len << ", instance " << j
                                      << (portable ? ", portable" : "");
        }
      }
    }
    simd::force_portable(previous);
  }
}

TEST(MlDsaSimd, SampleNttX4MatchesSampleNttWithAndWithoutRefills) {
  std::mt19937_64 rng(9);
  for (int i = 0; i < 40; ++i) {
    std::uint8_t rho[kSeedBytes];
    for (auto& b : rho) b = static_cast<std::uint8_t>(rng());
    const std::uint8_t s[4] = {0, 1, 4, static_cast<std::uint8_t>(i)};
    const std::uint8_t r[4] = {0, 7, 2, static_cast<std::uint8_t>(255 - i)};
    Poly got[4];
    Poly* const out[4] = {&got[0], &got[1], &got[2], &got[3]};
    // first_blocks 1 (56 candidates) makes every stream refill several times.
    const std::size_t first_blocks = i % 5 + 1;
    sample_ntt_x4(out, rho, s, r, first_blocks);
    for (std::size_t k = 0; k < 4; ++k) {
      Poly expected;
      sample_ntt(expected, rho, s[k], r[k]);
      ASSERT_EQ(got[k].c, expected.c) << "case " << i << ", entry " << k;
    }
  }
}

TEST(MlDsaSimd, SampleMaskX4MatchesSampleMask) {
  std::mt19937_64 rng(10);
  for (int i = 0; i < 40; ++i) {
    std::uint8_t rho2[kCrhBytes];
    for (auto& b : rho2) b = static_cast<std::uint8_t>(rng());
    const std::uint16_t nonce[4] = {static_cast<std::uint16_t>(i), 4, 65535,
                                    static_cast<std::uint16_t>(rng())};
    const int z_bits = i % 2 == 0 ? 18 : 20;  // ML-DSA-44; ML-DSA-65 and -87
    const std::int32_t gamma1 = z_bits == 18 ? (1 << 17) : (1 << 19);
    Poly got[4];
    Poly* const out[4] = {&got[0], &got[1], &got[2], &got[3]};
    sample_mask_x4(out, rho2, nonce, gamma1, z_bits);
    for (std::size_t k = 0; k < 4; ++k) {
      Poly expected;
      sample_mask(expected, rho2, nonce[k], gamma1, z_bits);
      ASSERT_EQ(got[k].c, expected.c) << "case " << i << ", entry " << k;
    }
  }
}

}  // namespace
}  // namespace pqot::crypto::mldsa
