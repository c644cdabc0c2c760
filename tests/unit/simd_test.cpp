// The vector code of the crypto core against its portable code, bit for bit (docs/crypto.md,
// "Vector code and its dispatch"): ML-DSA's AVX2 NTT and products (src/crypto/mldsa/ntt_avx2.cpp)
// on random and extreme inputs over the whole range each caller may pass (the bounds in
// src/crypto/mldsa/poly.hpp); the dispatch hook of src/crypto/simd.hpp. The ML-DSA
// known-answer tests run through both paths: mldsa_wycheproof_test.cpp (its *Portable tests).
#include "crypto/simd.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "crypto/mldsa/ntt_impl.hpp"
#include "crypto/mldsa/params.hpp"
#include "crypto/mldsa/poly.hpp"

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

}  // namespace
}  // namespace pqot::crypto::mldsa
