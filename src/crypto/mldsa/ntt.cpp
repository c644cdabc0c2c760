// The number-theoretic transform of FIPS 204 section 7.5 (Algorithms 41-42), with Montgomery
// arithmetic: zeta^BitRev8(m) is stored times 2^32 (zetas.hpp) so that montgomery_reduce() yields
// the plain product. This file holds the portable code and the dispatch to the AVX2 code
// (ntt_avx2.cpp) on CPUs that have it (../simd.hpp).
#include <array>
#include <cstdlib>

#include "../simd.hpp"
#include "ntt_impl.hpp"
#include "poly.hpp"
#include "reduce.hpp"
#include "zetas.hpp"

namespace pqot::crypto::mldsa {

namespace portable {

namespace {

using zetas::kInvNttScale;
using zetas::kInvNttScaledZeta;
using zetas::kZetas;

// One layer (one value of len) of Algorithm 41 with len a template parameter, so that the short
// inner loops of the last layers are unrolled instead of paying the loop overhead per butterfly.
template <std::size_t Len>
inline void ntt_layer(std::array<std::int32_t, kN>& w, std::size_t& m) noexcept {
  for (std::size_t start = 0; start < kN; start += 2 * Len) {
    const std::int64_t z = kZetas[++m];
    for (std::size_t j = start; j < start + Len; ++j) {
      const std::int32_t t = montgomery_reduce(z * w[j + Len]);
      w[j + Len] = w[j] - t;
      w[j] = w[j] + t;
    }
  }
}

// One layer of Algorithm 42, likewise.
template <std::size_t Len>
inline void invntt_layer(std::array<std::int32_t, kN>& w, std::size_t& m) noexcept {
  for (std::size_t start = 0; start < kN; start += 2 * Len) {
    const std::int64_t z = -static_cast<std::int64_t>(kZetas[--m]);
    for (std::size_t j = start; j < start + Len; ++j) {
      const std::int32_t t = w[j];
      w[j] = t + w[j + Len];
      w[j + Len] = montgomery_reduce(z * (t - w[j + Len]));
    }
  }
}

}  // namespace

void ntt(Poly& a) noexcept {
  std::size_t m = 0;
  ntt_layer<128>(a.c, m);
  ntt_layer<64>(a.c, m);
  ntt_layer<32>(a.c, m);
  ntt_layer<16>(a.c, m);
  ntt_layer<8>(a.c, m);
  ntt_layer<4>(a.c, m);
  ntt_layer<2>(a.c, m);
  ntt_layer<1>(a.c, m);
}

// Input: coefficients with |w_j| < q (reduced or not: times_challenge passes values in (-q, q)).
static_assert(256LL * (kQ - 1) < (1LL << 31), "the inverse NTT's additions stay below 2^31");

void invntt_tomont(Poly& a) noexcept {
  auto& w = a.c;
  std::size_t m = kN;
  // len = 1 .. 64. The additions grow: after layer len, |w_j| < 2 len q.
  invntt_layer<1>(w, m);
  invntt_layer<2>(w, m);
  invntt_layer<4>(w, m);
  invntt_layer<8>(w, m);
  invntt_layer<16>(w, m);
  invntt_layer<32>(w, m);
  invntt_layer<64>(w, m);
  // len = 128 (zetas[1]) with the scaling by f (line 21) folded in: |t +- u| < 256 (q - 1) < 2^31
  // (static_assert above), so both products stay below q 2^31.
  for (std::size_t j = 0; j < kN / 2; ++j) {
    const std::int64_t t = w[j];
    const std::int64_t u = w[j + kN / 2];
    w[j] = montgomery_reduce(kInvNttScale * (t + u));
    w[j + kN / 2] = montgomery_reduce(kInvNttScaledZeta * (t - u));
  }
}

void poly_pointwise(Poly& r, const Poly& a, const Poly& b) noexcept {
  for (std::size_t i = 0; i < kN; ++i) {
    r.c[i] = montgomery_reduce(static_cast<std::int64_t>(a.c[i]) * b.c[i]);
  }
}

namespace {

// Sum of L products of coefficients below q in magnitude (A_hat's are in [0, q); the NTT of y, z or
// s1 stays below 9q): at most 7 * q * 9q < q 2^31, so one Montgomery reduction per coefficient.
template <std::size_t L>
void poly_dot_n(Poly& r, const Poly* a, const Poly* b) noexcept {
  static_assert(L <= 7, "the accumulated products must stay below q 2^31");
  for (std::size_t i = 0; i < kN; ++i) {
    std::int64_t acc = 0;
    for (std::size_t j = 0; j < L; ++j) acc += static_cast<std::int64_t>(a[j].c[i]) * b[j].c[i];
    r.c[i] = montgomery_reduce(acc);
  }
}

}  // namespace

void poly_dot(Poly& r, const Poly* a, const Poly* b, std::size_t n) noexcept {
  switch (n) {
    case 4:
      poly_dot_n<4>(r, a, b);
      return;
    case 5:
      poly_dot_n<5>(r, a, b);
      return;
    default:
      poly_dot_n<7>(r, a, b);
      return;
  }
}

}  // namespace portable

// The functions of poly.hpp: the AVX2 code where the CPU has it (a branch on a CPU feature, never
// on data), else the portable code above.

void ntt(Poly& a) noexcept {
#if defined(__x86_64__)
  if (simd::use_avx2()) return avx2::ntt(a);
#endif
  portable::ntt(a);
}

void invntt_tomont(Poly& a) noexcept {
#if defined(__x86_64__)
  if (simd::use_avx2()) return avx2::invntt_tomont(a);
#endif
  portable::invntt_tomont(a);
}

void poly_pointwise(Poly& r, const Poly& a, const Poly& b) noexcept {
#if defined(__x86_64__)
  if (simd::use_avx2()) return avx2::poly_pointwise(r, a, b);
#endif
  portable::poly_pointwise(r, a, b);
}

void poly_dot(Poly& r, const Poly* a, const Poly* b, std::size_t n) noexcept {
  // Only l = 4, 5, 7 exist (FIPS 204 Table 1); the bound argument of poly_dot needs l <= 7.
  if (n != 4 && n != 5 && n != 7) std::abort();
#if defined(__x86_64__)
  if (simd::use_avx2()) return avx2::poly_dot(r, a, b, n);
#endif
  portable::poly_dot(r, a, b, n);
}

}  // namespace pqot::crypto::mldsa
