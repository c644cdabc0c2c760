// The number-theoretic transform of FIPS 203 section 4.3 (Algorithms 9-12), with Montgomery
// arithmetic: zeta^BitRev7(i) is stored times 2^16 so that fqmul() yields the plain product.
#include <array>

#include "poly.hpp"
#include "reduce.hpp"

namespace pqot::crypto::mlkem {

namespace {

constexpr int bitrev7(int i) {
  int r = 0;
  for (int b = 0; b < 7; ++b) r |= ((i >> b) & 1) << (6 - b);
  return r;
}

constexpr std::int32_t pow_mod(std::int32_t base, int e) {
  std::int64_t r = 1;
  for (int i = 0; i < e; ++i) r = r * base % kQ;
  return static_cast<std::int32_t>(r);
}

// zetas[i] = 2^16 * 17^BitRev7(i) mod q, centered in (-q/2, q/2] (17 is the 256th root of unity).
constexpr std::array<std::int16_t, 128> make_zetas() {
  std::array<std::int16_t, 128> z{};
  for (int i = 0; i < 128; ++i) {
    std::int32_t v = static_cast<std::int32_t>(
        static_cast<std::int64_t>(kMont) * pow_mod(17, bitrev7(i)) % kQ);
    if (v > kQ / 2) v -= kQ;
    z[static_cast<std::size_t>(i)] = static_cast<std::int16_t>(v);
  }
  return z;
}

constexpr std::array<std::int16_t, 128> kZetas = make_zetas();
static_assert(kZetas[0] == -1044 && kZetas[1] == -758, "2^16 and 2^16 * 17^64 mod q, centered");

// 2^32 / 128 mod q: the 1/128 of the inverse NTT and the factor 2^16, applied through one fqmul.
constexpr std::int16_t kInvNttScale = [] {
  std::int64_t inv128 = pow_mod(128, kQ - 2);  // Fermat inverse
  return static_cast<std::int16_t>(static_cast<std::int64_t>(kMont) * kMont % kQ * inv128 % kQ);
}();
static_assert(kInvNttScale == 1441);

}  // namespace

void ntt(Poly& a) noexcept {
  auto& r = a.c;
  std::size_t k = 1;
  for (std::size_t len = 128; len >= 2; len >>= 1) {
    for (std::size_t start = 0; start < kN; start += 2 * len) {
      const std::int16_t zeta = kZetas[k++];
      for (std::size_t j = start; j < start + len; ++j) {
        const std::int16_t t = fqmul(zeta, r[j + len]);
        r[j + len] = static_cast<std::int16_t>(r[j] - t);
        r[j] = static_cast<std::int16_t>(r[j] + t);
      }
    }
  }
}

// Gentleman-Sande butterflies with the zetas in reverse order: (b - a) * zeta^BitRev7(k) equals
// (a - b) * zeta^-BitRev7(k') for the mirrored index, so no second table is needed.
void invntt_tomont(Poly& a) noexcept {
  auto& r = a.c;
  std::size_t k = 127;
  for (std::size_t len = 2; len <= 128; len <<= 1) {
    for (std::size_t start = 0; start < kN; start += 2 * len) {
      const std::int16_t zeta = kZetas[k--];
      for (std::size_t j = start; j < start + len; ++j) {
        const std::int16_t t = r[j];
        r[j] = barrett_reduce(static_cast<std::int16_t>(t + r[j + len]));
        r[j + len] = fqmul(zeta, static_cast<std::int16_t>(r[j + len] - t));
      }
    }
  }
  for (auto& x : r) x = fqmul(x, kInvNttScale);
}

// Algorithm 11, MultiplyNTTs: 128 degree-one products, the i-th modulo X^2 - gamma_i with
// gamma_i = zeta^(2BitRev7(i)+1); for the pair (4i, 4i+2) that is +zetas[64+i] and -zetas[64+i].
void mulcache_compute(MulCache& cache, const Poly& b) noexcept {
  for (std::size_t i = 0; i < kN / 4; ++i) {
    const std::int16_t zeta = kZetas[64 + i];
    cache.c[2 * i] = fqmul(b.c[4 * i + 1], zeta);
    cache.c[2 * i + 1] = fqmul(b.c[4 * i + 3], static_cast<std::int16_t>(-zeta));
  }
}

// Algorithm 12, BaseCaseMultiply, summed over the vector before reducing:
// (a0 + a1 X)(b0 + b1 X) mod (X^2 - gamma) = (a0 b0 + a1 b1 gamma) + (a0 b1 + a1 b0) X.
// Bound: K <= 4 terms of |a| < 2^12 times (|b0| <= q/2 plus |b1 gamma| < q) stay below 2^27,
// inside Montgomery reduction's range of q * 2^15.
template <int K>
void polyvec_basemul_acc_montgomery(Poly& r, const PolyVec<K>& a, const PolyVec<K>& b,
                                    const std::array<MulCache, K>& b_cache) noexcept {
  for (std::size_t i = 0; i < kN / 2; ++i) {
    std::int32_t even = 0;
    std::int32_t odd = 0;
    for (std::size_t j = 0; j < K; ++j) {
      const std::int32_t a0 = a.p[j].c[2 * i], a1 = a.p[j].c[2 * i + 1];
      const std::int32_t b0 = b.p[j].c[2 * i], b1 = b.p[j].c[2 * i + 1];
      even += a0 * b0 + a1 * b_cache[j].c[i];
      odd += a0 * b1 + a1 * b0;
    }
    r.c[2 * i] = montgomery_reduce(even);
    r.c[2 * i + 1] = montgomery_reduce(odd);
  }
}

template void polyvec_basemul_acc_montgomery<2>(Poly&, const PolyVec<2>&, const PolyVec<2>&,
                                                const std::array<MulCache, 2>&) noexcept;
template void polyvec_basemul_acc_montgomery<3>(Poly&, const PolyVec<3>&, const PolyVec<3>&,
                                                const std::array<MulCache, 3>&) noexcept;
template void polyvec_basemul_acc_montgomery<4>(Poly&, const PolyVec<4>&, const PolyVec<4>&,
                                                const std::array<MulCache, 4>&) noexcept;

}  // namespace pqot::crypto::mlkem
