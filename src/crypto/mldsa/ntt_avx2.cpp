// ML-DSA's NTT (FIPS 204 Algorithms 41-42) and its products (Algorithm 45) with AVX2, eight
// coefficients per instruction. Same results, bit for bit, as the portable code in ntt.cpp: every
// lane computes montgomery_reduce() of the same 64-bit product or sum as the portable code, and
// the additions are the same exact integer additions (the bounds in poly.hpp keep them below
// 2^31), so only the order of independent operations differs. Coefficients stay in the standard
// order (unlike the reference AVX2 code, which permutes them), so A_hat from sample_ntt and every
// caller see the same layout on both paths. No branch and no memory index depends on the data.
//
// The functions carry __attribute__((target("avx2"))) rather than the file being compiled with
// -mavx2: code inlined from shared headers must not turn into AVX2 code other files link to.
// They run only after simd::use_avx2() said yes (ntt.cpp).
#include "ntt_impl.hpp"

#if defined(__x86_64__)

#include <immintrin.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "reduce.hpp"
#include "zetas.hpp"

#define PQOT_AVX2 __attribute__((target("avx2")))
#define PQOT_AVX2_INLINE __attribute__((target("avx2"), always_inline)) inline

namespace pqot::crypto::mldsa::avx2 {

namespace {

using zetas::kInvNttScale;
using zetas::kInvNttScaledZeta;
using zetas::kZetas;

// The per-lane zetas of the three last layers of the NTT (first three of the inverse), which run
// on 16 coefficients at a time in registers (ntt16 / invntt16). Lane i of the vector for chunk c
// (coefficients 16c .. 16c+15) holds the zeta of the butterfly group lane i belongs to, in the
// lane order of the shuffled registers described at ntt16. The inverse tables hold -zeta, as the
// portable invntt_layer multiplies by.
struct LaneZetas {
  alignas(32) std::array<std::array<std::int32_t, 8>, 16> len4, len2, len1;
};

// Group index (within the layer) of lane i of chunk c, for len 4, 2 and 1 (see ntt16).
constexpr std::size_t group_len4(std::size_t c, std::size_t i) {
  return 2 * c + i / 4;
}
constexpr std::size_t group_len2(std::size_t c, std::size_t i) {
  return 4 * c + i / 2;
}
constexpr std::size_t group_len1(std::size_t c, std::size_t i) {
  return 8 * c + i;
}

// Forward layer len uses zetas[128/len + group] (Algorithm 41: m counts up from 1); the inverse
// uses -zetas[256/len - 1 - group] (Algorithm 42: m counts down from 256).
constexpr LaneZetas make_lane_zetas(bool inverse) {
  LaneZetas t{};
  for (std::size_t c = 0; c < 16; ++c) {
    for (std::size_t i = 0; i < 8; ++i) {
      if (inverse) {
        t.len4[c][i] = -kZetas[63 - group_len4(c, i)];
        t.len2[c][i] = -kZetas[127 - group_len2(c, i)];
        t.len1[c][i] = -kZetas[255 - group_len1(c, i)];
      } else {
        t.len4[c][i] = kZetas[32 + group_len4(c, i)];
        t.len2[c][i] = kZetas[64 + group_len2(c, i)];
        t.len1[c][i] = kZetas[128 + group_len1(c, i)];
      }
    }
  }
  return t;
}

constexpr LaneZetas kForwardLaneZetas = make_lane_zetas(false);
constexpr LaneZetas kInverseLaneZetas = make_lane_zetas(true);

PQOT_AVX2_INLINE __m256i load(const std::int32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
PQOT_AVX2_INLINE void store(std::int32_t* p, __m256i v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
}

// montgomery_reduce() of eight 64-bit values, given as the products or sums of the even lanes
// (in the 64-bit lanes of `even`) and of the odd lanes (in `odd`). Per 64-bit value a, as in
// reduce.hpp: t = low32(a) * q^-1 mod 2^32 taken as signed, result = (a - t q) >> 32. a and t q
// agree in their low 32 bits, so the result is high32(a) - high32(t q), a 32-bit subtraction of
// the odd 32-bit halves.
PQOT_AVX2_INLINE __m256i montgomery_reduce8(__m256i even, __m256i odd) {
  const __m256i qinv = _mm256_set1_epi32(kQInv);
  const __m256i q = _mm256_set1_epi32(kQ);
  __m256i t_even = _mm256_mul_epi32(even, qinv);  // low 32 bits: t (mul_epi32 reads them signed)
  __m256i t_odd = _mm256_mul_epi32(odd, qinv);
  t_even = _mm256_mul_epi32(t_even, q);
  t_odd = _mm256_mul_epi32(t_odd, q);
  const __m256i r_even = _mm256_srli_epi64(_mm256_sub_epi32(even, t_even), 32);
  const __m256i r_odd = _mm256_sub_epi32(odd, t_odd);
  return _mm256_blend_epi32(r_even, r_odd, 0xAA);
}

// Lane i: montgomery_reduce(int64(a_i) * b_i).
PQOT_AVX2_INLINE __m256i montgomery_mul(__m256i a, __m256i b) {
  const __m256i even = _mm256_mul_epi32(a, b);
  const __m256i odd = _mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32));
  return montgomery_reduce8(even, odd);
}

// The same with b equal in all lanes (a broadcast zeta): no shift of b needed.
PQOT_AVX2_INLINE __m256i montgomery_mul_const(__m256i a, __m256i b) {
  const __m256i even = _mm256_mul_epi32(a, b);
  const __m256i odd = _mm256_mul_epi32(_mm256_srli_epi64(a, 32), b);
  return montgomery_reduce8(even, odd);
}

// Forward butterfly of Algorithm 41 lines 8-10 on eight lane pairs: t = zeta * hi, hi = lo - t,
// lo = lo + t.
PQOT_AVX2_INLINE void butterfly(__m256i& lo, __m256i& hi, __m256i t) {
  hi = _mm256_sub_epi32(lo, t);
  lo = _mm256_add_epi32(lo, t);
}

// Inverse butterfly of Algorithm 42 lines 8-10 with z = -zeta: lo' = lo + hi,
// hi' = montgomery(z * (lo - hi)).
PQOT_AVX2_INLINE void inv_butterfly(__m256i& lo, __m256i& hi, __m256i z, bool broadcast) {
  const __m256i diff = _mm256_sub_epi32(lo, hi);
  lo = _mm256_add_epi32(lo, hi);
  hi = broadcast ? montgomery_mul_const(diff, z) : montgomery_mul(diff, z);
}

// One layer of Algorithm 41 with len >= 8: whole vectors pair with vectors len apart.
template <std::size_t Len>
PQOT_AVX2_INLINE void ntt_layer(std::int32_t* w) {
  std::size_t m = kN / (2 * Len);  // the first zeta index of this layer, 128 / len
  for (std::size_t start = 0; start < kN; start += 2 * Len) {
    const __m256i z = _mm256_set1_epi32(kZetas[m++]);
    for (std::size_t j = start; j < start + Len; j += 8) {
      __m256i lo = load(w + j);
      __m256i hi = load(w + j + Len);
      butterfly(lo, hi, montgomery_mul_const(hi, z));
      store(w + j, lo);
      store(w + j + Len, hi);
    }
  }
}

// One layer of Algorithm 42 with len >= 8.
template <std::size_t Len>
PQOT_AVX2_INLINE void invntt_layer(std::int32_t* w) {
  std::size_t m = kN / Len;  // one past the first zeta index of this layer, 256 / len
  for (std::size_t start = 0; start < kN; start += 2 * Len) {
    const __m256i z = _mm256_set1_epi32(-kZetas[--m]);
    for (std::size_t j = start; j < start + Len; j += 8) {
      __m256i lo = load(w + j);
      __m256i hi = load(w + j + Len);
      inv_butterfly(lo, hi, z, true);
      store(w + j, lo);
      store(w + j + Len, hi);
    }
  }
}

// The registers of one chunk of 16 coefficients, written a0..a7 (first vector) and b0..b7, in
// the three arrangements that put butterfly partners in the same lane of two registers:
//   len 4:  x = [a0 a1 a2 a3 | b0 b1 b2 b3]   y = [a4 a5 a6 a7 | b4 b5 b6 b7]
//   len 2:  p = [a0 a1 a4 a5 | b0 b1 b4 b5]   q = [a2 a3 a6 a7 | b2 b3 b6 b7]
//   len 1:  r = [a0 a2 a4 a6 | b0 b2 b4 b6]   s = [a1 a3 a5 a7 | b1 b3 b5 b7]
// (group_len4/2/1 above give each lane's butterfly group).
PQOT_AVX2_INLINE void to_len4(__m256i& x, __m256i& y, __m256i a, __m256i b) {
  x = _mm256_permute2x128_si256(a, b, 0x20);
  y = _mm256_permute2x128_si256(a, b, 0x31);
}
PQOT_AVX2_INLINE void from_len4(__m256i& a, __m256i& b, __m256i x, __m256i y) {
  a = _mm256_permute2x128_si256(x, y, 0x20);
  b = _mm256_permute2x128_si256(x, y, 0x31);
}
// x, y <-> p, q: the same 64-bit interleave in both directions.
PQOT_AVX2_INLINE void swap_len4_len2(__m256i& u, __m256i& v) {
  const __m256i lo = _mm256_unpacklo_epi64(u, v);
  v = _mm256_unpackhi_epi64(u, v);
  u = lo;
}
// p, q <-> r, s: the same 32-bit interleave in both directions.
PQOT_AVX2_INLINE void swap_len2_len1(__m256i& u, __m256i& v) {
  const __m256i lo = _mm256_blend_epi32(u, _mm256_slli_epi64(v, 32), 0xAA);
  v = _mm256_blend_epi32(_mm256_srli_epi64(u, 32), v, 0xAA);
  u = lo;
}

PQOT_AVX2_INLINE __m256i lane_zetas(const std::array<std::int32_t, 8>& z) {
  return load(z.data());
}

// Layers len = 4, 2, 1 of Algorithm 41 on chunk c.
PQOT_AVX2_INLINE void ntt16(std::int32_t* w, std::size_t c) {
  __m256i u, v;
  to_len4(u, v, load(w + 16 * c), load(w + 16 * c + 8));
  butterfly(u, v, montgomery_mul(v, lane_zetas(kForwardLaneZetas.len4[c])));
  swap_len4_len2(u, v);
  butterfly(u, v, montgomery_mul(v, lane_zetas(kForwardLaneZetas.len2[c])));
  swap_len2_len1(u, v);
  butterfly(u, v, montgomery_mul(v, lane_zetas(kForwardLaneZetas.len1[c])));
  swap_len2_len1(u, v);
  swap_len4_len2(u, v);
  __m256i a, b;
  from_len4(a, b, u, v);
  store(w + 16 * c, a);
  store(w + 16 * c + 8, b);
}

// Layers len = 1, 2, 4 of Algorithm 42 on chunk c.
PQOT_AVX2_INLINE void invntt16(std::int32_t* w, std::size_t c) {
  __m256i u, v;
  to_len4(u, v, load(w + 16 * c), load(w + 16 * c + 8));
  swap_len4_len2(u, v);
  swap_len2_len1(u, v);
  inv_butterfly(u, v, lane_zetas(kInverseLaneZetas.len1[c]), false);
  swap_len2_len1(u, v);
  inv_butterfly(u, v, lane_zetas(kInverseLaneZetas.len2[c]), false);
  swap_len4_len2(u, v);
  inv_butterfly(u, v, lane_zetas(kInverseLaneZetas.len4[c]), false);
  __m256i a, b;
  from_len4(a, b, u, v);
  store(w + 16 * c, a);
  store(w + 16 * c + 8, b);
}

}  // namespace

PQOT_AVX2 void ntt(Poly& a) noexcept {
  std::int32_t* w = a.c.data();
  ntt_layer<128>(w);
  ntt_layer<64>(w);
  ntt_layer<32>(w);
  ntt_layer<16>(w);
  ntt_layer<8>(w);
  for (std::size_t c = 0; c < kN / 16; ++c) ntt16(w, c);
}

PQOT_AVX2 void invntt_tomont(Poly& a) noexcept {
  std::int32_t* w = a.c.data();
  for (std::size_t c = 0; c < kN / 16; ++c) invntt16(w, c);
  invntt_layer<8>(w);
  invntt_layer<16>(w);
  invntt_layer<32>(w);
  invntt_layer<64>(w);
  // len = 128 with the scaling by f folded in, as in ntt.cpp: t + u and t - u stay below 2^31.
  const __m256i scale = _mm256_set1_epi32(kInvNttScale);
  const __m256i scaled_zeta = _mm256_set1_epi32(kInvNttScaledZeta);
  for (std::size_t j = 0; j < kN / 2; j += 8) {
    const __m256i t = load(w + j);
    const __m256i u = load(w + j + kN / 2);
    store(w + j, montgomery_mul_const(_mm256_add_epi32(t, u), scale));
    store(w + j + kN / 2, montgomery_mul_const(_mm256_sub_epi32(t, u), scaled_zeta));
  }
}

PQOT_AVX2 void poly_pointwise(Poly& r, const Poly& a, const Poly& b) noexcept {
  for (std::size_t i = 0; i < kN; i += 8) {
    store(r.c.data() + i, montgomery_mul(load(a.c.data() + i), load(b.c.data() + i)));
  }
}

// The sum of the n products of each coefficient accumulated exactly in 64 bits, then one
// Montgomery reduction: the same value the portable poly_dot_n reduces.
PQOT_AVX2 void poly_dot(Poly& r, const Poly* a, const Poly* b, std::size_t n) noexcept {
  for (std::size_t i = 0; i < kN; i += 8) {
    __m256i even = _mm256_setzero_si256();
    __m256i odd = _mm256_setzero_si256();
    for (std::size_t j = 0; j < n; ++j) {
      const __m256i x = load(a[j].c.data() + i);
      const __m256i y = load(b[j].c.data() + i);
      even = _mm256_add_epi64(even, _mm256_mul_epi32(x, y));
      odd = _mm256_add_epi64(odd,
                             _mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(y, 32)));
    }
    store(r.c.data() + i, montgomery_reduce8(even, odd));
  }
}

}  // namespace pqot::crypto::mldsa::avx2

#undef PQOT_AVX2
#undef PQOT_AVX2_INLINE

#endif  // defined(__x86_64__)
